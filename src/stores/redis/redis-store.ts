import { HISTORY_LIMIT, LOG_LIMIT, isLive, type HistoryEntry, type SessionLogEntry, type SessionRecord } from '../../model/session';
import { ITEM_FORMAT, formatOf, linesToAppend, logToAppend, parsedLines, readSessionRecord, recordText } from '../record-check';
import {
  LeaseLost,
  StoreUnavailable,
  type ChannelCount,
  type Claimed,
  type ConversationRef,
  type InboundItem,
  type Lease,
  type NewInboundItem,
  type SessionStore,
  type StepCommit,
  type CommitOutcome,
} from '../session-store';
import type { Say } from '../../model/texts';
import type { RedisStoreConfig } from './config';
import { RedisConnection, type Log } from './connection';
import { runScript, type ScriptName } from './scripts';
import { KnownCopies } from './known-copies';

/** How many conversations with items `orphans` looks through at most per call. */
const ORPHAN_SCAN = 2000;
/** How long the first commands wait for the store's connection (a webhook must still answer in time). */
const FIRST_CONNECT_WAIT_MS = 2000;
/** How many Sessions one script of the one-time indexing looks at (a short script: Redis serves nobody else meanwhile). */
const INDEX_BATCH = 200;
/** The indexes the commit script keeps beyond those of 0.1.0 (`indexed`): 2, the counts per Channel and the person index. */
const INDEX_VERSION = 2;

/**
 * The Session store several Node-RED instances share: everything in one Redis under
 * `<prefix>s:`, each step one Lua script (see scripts.ts). Leases expire, so a dead instance
 * blocks a conversation for one lease at most, and carry a fencing token, so its late commit is
 * refused. Durable as far as Redis is: with AOF `appendfsync everysec`, a power loss of the Redis
 * host can lose the last second.
 */
export class RedisStore implements SessionStore {
  readonly durable = true;
  readonly shared = true;
  readonly description: string;
  private readonly S: string;
  /** The one-time indexing of Sessions written before the counts per Channel and the person index, once it ran (or while it runs). */
  private indexed: Promise<void> | undefined;
  /** The records and items this instance wrote, so a claim brings back only what changed since (known-copies.ts). */
  private readonly known = new KnownCopies();
  /** The first connection attempt, while it lasts. */
  private connecting: Promise<void> | undefined;

  constructor(
    private readonly connection: RedisConnection,
    private readonly log: Log,
    private readonly say: Say,
  ) {
    this.S = `${connection.config.prefix}s:`;
    this.description = `${connection.where}, key prefix "${connection.config.prefix}"`;
  }

  /**
   * A store on a connection of its own; connecting starts now, in the background, and commands wait
   * for that first attempt (at most FIRST_CONNECT_WAIT_MS), so what a deploy does at once (the
   * sweep, a Call out) finds Redis there.
   */
  static open(config: RedisStoreConfig, log: Log, say: Say): RedisStore {
    const connection = new RedisConnection(config, log, 'sessions', say);
    const store = new RedisStore(connection, log, say);
    store.connecting = connection.open(FIRST_CONNECT_WAIT_MS).then(() => {
      store.connecting = undefined;
      // At open, so no scrape or Call out waits for it; one that fails (Redis away) is tried again by the next.
      if (connection.available) store.indexedOlder().catch(() => undefined);
    });
    return store;
  }

  /** Resolves once Redis answered, or after `waitMs` (the store then keeps trying by itself). */
  async whenConnected(waitMs: number): Promise<boolean> {
    await this.connection.open(waitMs);
    return this.connection.available;
  }

  /** Whether Redis answers now (for the start nodes' status). */
  get available(): boolean {
    return this.connection.available;
  }

  /** Called with false when Redis goes away and true when it is back; returns the way to stop listening. */
  onAvailability(listener: (available: boolean) => void): () => void {
    return this.connection.onAvailability(listener);
  }

  async record(item: NewInboundItem): Promise<{ seq: number } | 'duplicate'> {
    // The item's conversation is the list it is in (every version reads it from there), so the
    // body does not carry it again.
    const body = JSON.stringify({
      v: ITEM_FORMAT,
      kind: item.kind,
      payload: item.payload ?? null,
      at: Date.now(),
    });
    const cid = cidOf(item);
    const seq = Number(await this.run('record', 'record an inbound message', [cid, body, item.dedupe?.key ?? '', String(item.dedupe?.ttlMs ?? 0)]));
    if (seq < 0) return 'duplicate';
    this.known.itemRecorded(cid, seq, body);
    return { seq };
  }

  async next(ref: ConversationRef, handOut?: boolean): Promise<InboundItem | undefined> {
    for (;;) {
      const args = [cidOf(ref), handOut ? '1' : '', String(Date.now())];
      const reply = (await this.run('next', 'read a conversation', args)) as [string, string | null, string?, string[]?] | null;
      if (!reply) return undefined;
      const item = await this.readItem(ref, reply[0], reply[1]);
      if (item) return withAgain(item, reply[2], reply[3]);
    }
  }

  /** An item as `next` and `claimNext` read it; an unreadable one is set aside (undefined). */
  private async readItem(ref: ConversationRef, seqText: string, raw: string | null): Promise<InboundItem | undefined> {
    const seq = Number(seqText);
    try {
      if (raw === null) throw new Error('the item is missing');
      const item = JSON.parse(raw) as { v?: unknown; kind: string; payload: unknown; at: number };
      // Checked as SQLite's columns check them: an item edited by hand into another shape would
      // otherwise be consumed by its step as an unknown kind, lost rather than set aside.
      if (typeof item !== 'object' || item === null || Array.isArray(item)) throw new Error('not an object');
      const format = formatOf(item.v, ITEM_FORMAT);
      if (format) throw new Error(format);
      if (typeof item.kind !== 'string') throw new Error('kind is not text');
      if (typeof item.at !== 'number') throw new Error('at is not a time');
      return { environment: ref.environment, conversation: ref.conversation, seq, kind: item.kind, payload: item.payload, at: item.at };
    } catch (err) {
      const reason = `unreadable: ${(err as Error).message}`;
      await this.run('setAsideItem', 'set aside an unreadable message', [cidOf(ref), String(seq), reason, String(Date.now())]);
      this.log.error(
        `[channel-sessions] ${this.say('runtime.log.store.itemSetAside', { seq, where: this.connection.where, reason, aside: `${this.S}aside` })}`,
      );
      return undefined;
    }
  }

  /**
   * The claim tells Redis what this instance wrote last of the conversation (the record's digest,
   * the item's seq); Redis answers 1 in place of a text it holds exactly so, and the text otherwise.
   */
  async claimNext(ref: ConversationRef, owner: string, leaseMs: number): Promise<Claimed | undefined> {
    type Reply = [number, string?, (string | number | null)?, (string | null)?, (string | number | null)?, string?, string[]?];
    const cid = cidOf(ref);
    const { record, item: knownItem } = this.known.hint(cid);
    const args = [cid, owner, String(Math.max(1, Math.round(leaseMs))), record?.digest ?? '', knownItem?.seq ?? '', String(Date.now())];
    const reply = (await this.run('claimNext', 'take a conversation', args)) as Reply | null;
    if (!reply) return undefined;
    const lease = { environment: ref.environment, conversation: ref.conversation, owner, fence: Number(reply[0]) };
    if (reply.length < 2) return { lease, item: undefined };
    const [, seq, raw, id, session, since, journal] = reply;
    try {
      const itemText = typeof raw === 'number' ? knownItem?.text : raw;
      const sessionText = typeof session === 'number' ? record?.text : session;
      // An unreadable first item is set aside and the next one read (and handed out), as `next` does.
      const read = await this.readItem(ref, String(seq), itemText ?? null);
      const item = read ? withAgain(read, since, journal) : await this.next(ref, true);
      if (!item) return { lease, item };
      return { lease, item, live: { session: id && sessionText ? await this.checked(String(id), sessionText) : undefined } };
    } catch (err) {
      await this.release(lease).catch(() => undefined);
      throw err;
    }
  }

  async recordEffect(lease: Lease, _conversation: ConversationRef, seq: number, key: string, outcome: unknown): Promise<void> {
    try {
      await this.run('recordEffect', 'record what a step sent', [cidOf(lease), tokenOf(lease), String(seq), key, JSON.stringify(outcome ?? null)]);
    } catch (err) {
      if (err instanceof StoreUnavailable && /LEASE_LOST/.test(String((err.cause as Error)?.message))) throw new LeaseLost(lease);
      throw err;
    }
  }

  async effectsOf(conversation: ConversationRef, seq: number): Promise<Map<string, unknown>> {
    const fields = await this.call('read what a step sent', (c) => c.hGetAll(`${this.S}fx:${cidOf(conversation)}:${seq}`));
    return journalOf(Object.entries(fields).flat());
  }

  async releaseIfIdle(lease: Lease): Promise<boolean> {
    return Number(await this.run('releaseIfIdle', 'release a lease', [cidOf(lease), tokenOf(lease)])) === 1;
  }

  async pending(seq: number): Promise<boolean> {
    return this.call('read a message', (c) => c.hExists(`${this.S}items`, String(seq))).then(Boolean);
  }

  async claim(ref: ConversationRef, owner: string, leaseMs: number): Promise<Lease | undefined> {
    const fence = await this.run('claim', 'take a conversation', [cidOf(ref), owner, String(Math.max(1, Math.round(leaseMs)))]);
    if (fence === null || fence === undefined) return undefined;
    return { environment: ref.environment, conversation: ref.conversation, owner, fence: Number(fence) };
  }

  async renew(lease: Lease, leaseMs: number): Promise<boolean> {
    return Number(await this.run('renew', 'extend a lease', [cidOf(lease), tokenOf(lease), String(Math.max(1, Math.round(leaseMs)))])) === 1;
  }

  async renewAll(leases: Lease[], leaseMs: number): Promise<boolean[]> {
    if (!leases.length) return [];
    const args = [String(Math.max(1, Math.round(leaseMs))), ...leases.flatMap((l) => [cidOf(l), tokenOf(l)])];
    const reply = (await this.run('renewAll', 'extend the leases', args)) as number[];
    return reply.map((n) => Number(n) === 1);
  }

  async release(lease: Lease): Promise<void> {
    await this.run('release', 'release a lease', [cidOf(lease), tokenOf(lease)]);
  }

  async liveSession(ref: ConversationRef): Promise<SessionRecord | undefined> {
    const id = await this.call('read a Session', (c) => c.hGet(`${this.S}live`, cidOf(ref)));
    return id ? this.sessionById(String(id)) : undefined;
  }

  async sessionById(id: string): Promise<SessionRecord | undefined> {
    const raw = await this.call('read a Session', (c) => c.hGet(`${this.S}sessions`, id));
    return raw === null || raw === undefined ? undefined : this.checked(id, String(raw));
  }

  async history(sessionId: string): Promise<HistoryEntry[]> {
    return parsedLines<HistoryEntry>(await this.call('read a history', (c) => c.lRange(`${this.S}h:${sessionId}`, 0, -1)));
  }

  async sessionLog(sessionId: string): Promise<SessionLogEntry[]> {
    return parsedLines<SessionLogEntry>(await this.call('read a Session log', (c) => c.lRange(`${this.S}l:${sessionId}`, 0, -1)));
  }

  async commit(step: StepCommit): Promise<CommitOutcome> {
    const { session } = step;
    const live = session !== undefined && isLive(session);
    const lines = live ? linesToAppend(session) : [];
    const entries = live ? logToAppend(session) : [];
    const leaseCid = cidOf(step.lease);
    const sessionCid = session ? cidOf({ environment: session.environment, conversation: session.key }) : undefined;
    const text = live ? recordText(session) : '';
    const control = {
      consumed: step.consumed === undefined ? '' : String(step.consumed),
      marks: (step.marks ?? []).map((m) => [m.key, String(Math.max(1, Math.round(m.ttlMs)))]),
      op: !session ? '' : isLive(session) ? 'keep' : 'remove',
      id: session?.id ?? '',
      env: session?.environment ?? '',
      ch: session?.channel ?? '',
      person: (live && session.person) || '',
      // '' for the lease's own conversation (most steps): the script takes it from there.
      cid: sessionCid === undefined || sessionCid === leaseCid ? '' : sessionCid,
      node: session && isLive(session) && session.state === 'waiting' ? (session.waitingAt?.nodeId ?? '') : '',
      activity: String(session?.lastActivity ?? 0),
      iv: ITEM_FORMAT,
      // The commit script writes each timer's item (v, environment, conversation, kind, payload {sessionId, due, wait}, at) from these.
      timers: session && isLive(session) ? (step.timers ?? []).map((t) => ({ kind: t.kind, due: String(t.due), wait: JSON.stringify(t.payload ?? null) })) : [],
      hcount: String(lines.length),
      hn: String(live ? session.historyLines : 0),
      hmax: String(HISTORY_LIMIT),
      ln: String(live ? session.logLines : 0),
      lmax: String(LOG_LIMIT),
      release: step.releaseIfIdle ? 1 : 0,
      journal: step.journal === undefined ? '' : String(step.journal),
    };
    let reply: unknown;
    try {
      reply = await this.run('commit', 'save a Session step', [
        leaseCid,
        tokenOf(step.lease),
        JSON.stringify(control),
        text,
        ...lines.map((l) => JSON.stringify(l.line)),
        ...entries.map((l) => JSON.stringify(l.line)),
      ]);
    } catch (err) {
      // Whether Redis holds this record is not known now: the next claim brings it back whole.
      if (sessionCid !== undefined) this.known.forgetRecord(sessionCid);
      if (err instanceof StoreUnavailable && /LEASE_LOST/.test(String((err.cause as Error)?.message))) throw new LeaseLost(step.lease);
      throw err;
    }
    if (sessionCid !== undefined) {
      if (live) this.known.recordWritten(sessionCid, text);
      else this.known.forgetRecord(sessionCid);
    }
    if (!step.releaseIfIdle) return undefined;
    return Number(reply) === 2 ? 'released' : 'kept';
  }

  async takeDueTimers(now: number, limit: number): Promise<ConversationRef[]> {
    const cids = (await this.run('takeDueTimers', 'move due timers', [String(Math.floor(now)), String(limit)])) as string[];
    return cids.map(refOf);
  }

  async orphans(limit: number, owner?: string): Promise<ConversationRef[]> {
    const cids = (await this.run('orphans', 'look for orphaned conversations', [String(limit), String(ORPHAN_SCAN), owner ?? ''])) as string[];
    return cids.map(refOf);
  }

  async list(filter: { environment?: string; waitingAt?: string[]; limit: number }): Promise<SessionRecord[]> {
    let ids: string[];
    if (filter.waitingAt) {
      const scored: Array<{ id: string; score: number }> = [];
      for (const node of new Set(filter.waitingAt)) {
        const found = await this.call('list Sessions', (c) =>
          c.zRangeWithScores(`${this.S}at:${node}`, '+inf', '-inf', {
            BY: 'SCORE',
            REV: true,
            LIMIT: { offset: 0, count: filter.environment ? filter.limit * 4 : filter.limit },
          }),
        );
        for (const entry of found) scored.push({ id: String(entry.value), score: Number(entry.score) });
      }
      ids = scored.sort((a, b) => b.score - a.score).map((e) => e.id);
    } else {
      const key = filter.environment ? `${this.S}activity:${filter.environment}` : `${this.S}activity`;
      ids = (await this.call('list Sessions', (c) => c.zRange(key, 0, filter.limit - 1, { REV: true }))).map(String);
    }
    if (!ids.length) return [];
    const raws = await this.call('list Sessions', (c) => c.hmGet(`${this.S}sessions`, ids));
    const sessions: SessionRecord[] = [];
    for (let i = 0; i < ids.length && sessions.length < filter.limit; i++) {
      const raw = raws[i];
      if (raw === null || raw === undefined) continue;
      const session = await this.checked(ids[i], String(raw));
      if (session && (!filter.environment || session.environment === filter.environment)) sessions.push(session);
    }
    return sessions;
  }

  async count(filter: { environment?: string }): Promise<number> {
    const key = filter.environment ? `${this.S}activity:${filter.environment}` : `${this.S}activity`;
    return Number(await this.call('count Sessions', (c) => c.zCard(key)));
  }

  async waitingByNode(): Promise<Map<string, number>> {
    const flat = (await this.run('waitingByNode', 'count waiting Sessions', [])) as Array<string | number>;
    const counts = new Map<string, number>();
    for (let i = 0; i + 1 < flat.length; i += 2) if (Number(flat[i + 1]) > 0) counts.set(String(flat[i]), Number(flat[i + 1]));
    return counts;
  }

  async countByChannel(): Promise<ChannelCount[]> {
    await this.indexedOlder();
    const fields = await this.call('count Sessions', (c) => c.hGetAll(`${this.S}channels`));
    const counts = new Map<string, ChannelCount>();
    for (const [field, n] of Object.entries(fields)) {
      const [environment, channel, waiting] = JSON.parse(field) as [string, string, number];
      const key = JSON.stringify([environment, channel]);
      let count = counts.get(key);
      if (!count) counts.set(key, (count = { environment, channel, live: 0, waiting: 0 }));
      count.live += Number(n);
      if (waiting) count.waiting += Number(n);
    }
    return [...counts.values()].filter((c) => c.live > 0);
  }

  async liveWith(environment: string, person: string): Promise<SessionRecord[]> {
    await this.indexedOlder();
    const flat = (await this.run('liveWith', "read a person's Sessions", [environment, person])) as string[];
    const sessions: SessionRecord[] = [];
    for (let i = 0; i + 1 < flat.length; i += 2) {
      const session = await this.checked(String(flat[i]), String(flat[i + 1]));
      if (session && isLive(session) && session.environment === environment) sessions.push(session);
    }
    return sessions;
  }

  /**
   * Sessions written before the counts per Channel and the person index (by an earlier version:
   * `indexed` below INDEX_VERSION) are indexed once, in short scripts over `where`; the commits
   * keep the indexes from then on, so neither a scrape nor a Call out reads the Sessions.
   */
  private indexedOlder(): Promise<void> {
    this.indexed ??= this.indexOlder().catch((err: unknown) => {
      this.indexed = undefined;
      throw err;
    });
    return this.indexed;
  }

  private async indexOlder(): Promise<void> {
    if (Number(await this.call('read the indexes', (c) => c.get(`${this.S}indexed`))) >= INDEX_VERSION) return;
    let cursor = '0';
    do {
      cursor = String(await this.run('indexOlder', 'index the Sessions written before', [cursor, String(INDEX_BATCH), String(INDEX_VERSION)]));
    } while (cursor !== '0');
  }

  async seen(key: string, ttlMs: number): Promise<boolean> {
    const set = await this.call('remember a handled message', (c) =>
      c.set(`${this.S}seen:${key}`, '1', { condition: 'NX', expiration: { type: 'PX', value: Math.max(1, Math.round(ttlMs)) } }),
    );
    return set === null;
  }

  async remembered(key: string): Promise<boolean> {
    return (await this.call('read a remembered key', (c) => c.exists(`${this.S}seen:${key}`))) > 0;
  }

  async takeSlot(key: string, intervalMs: number, now: number): Promise<number> {
    return Number(await this.run('takeSlot', 'pace an action', [key, String(Math.max(1, Math.round(intervalMs))), String(Math.floor(now))]));
  }

  async pushOutput(ref: ConversationRef, items: unknown[], ttlMs: number): Promise<void> {
    if (!items.length) return;
    await this.run('pushOutput', 'keep a reply for the call', [cidOf(ref), String(Math.max(1, Math.round(ttlMs))), ...items.map((i) => JSON.stringify(i))]);
  }

  async takeOutput(ref: ConversationRef): Promise<unknown[]> {
    const raw = (await this.run('takeOutput', 'read the replies of the call', [cidOf(ref)])) as string[];
    return raw.map((r) => JSON.parse(r) as unknown);
  }

  async close(): Promise<void> {
    await this.connection.close();
  }

  /** A malformed record never wedges its conversation: it is set aside, named in the log, and the conversation goes on without it. */
  private async checked(id: string, raw: string): Promise<SessionRecord | undefined> {
    const result = readSessionRecord(raw);
    if ('session' in result) return result.session;
    await this.run('setAsideSession', 'set aside a malformed Session', [id, result.problem, String(Date.now())]);
    const said = { id, where: this.connection.where, problem: result.problem, aside: `${this.S}aside` };
    this.log.error(`[channel-sessions] ${this.say('runtime.log.store.sessionSetAside', said)}`);
    return undefined;
  }

  private async run(name: ScriptName, what: string, args: string[]): Promise<unknown> {
    return this.call(what, (c) => runScript(c, name, [this.S, ...args]));
  }

  private async call<T>(what: string, work: (client: RedisConnection['client']) => Promise<T>): Promise<T> {
    if (this.connecting) await this.connecting;
    try {
      return await work(this.connection.client);
    } catch (err) {
      throw new StoreUnavailable(`the Session store (${this.connection.where}) could not ${what}: ${this.connection.describe(err)}`, err);
    }
  }
}

/** A conversation's id in keys and sets: unambiguous whatever the conversation key contains. */
function cidOf(ref: ConversationRef): string {
  return JSON.stringify([ref.environment, ref.conversation]);
}

function refOf(cid: string): ConversationRef {
  const [environment, conversation] = JSON.parse(cid) as [string, string];
  return { environment, conversation };
}

/** An item handed out again (`since` given by the hand-out) carries when it first was and its journal. */
function withAgain(item: InboundItem, since: string | undefined, journal: string[] | undefined): InboundItem {
  if (since === undefined || since === null) return item;
  return { ...item, again: { since: Number(since), effects: journalOf(journal ?? []) } };
}

/** A journal as HGETALL gives it (field, value, …), without the hand-out's own field; an outcome that is not JSON is as if not recorded. */
function journalOf(flat: string[]): Map<string, unknown> {
  const journal = new Map<string, unknown>();
  for (let i = 0; i + 1 < flat.length; i += 2) {
    if (flat[i] === '.since') continue;
    try {
      journal.set(String(flat[i]), JSON.parse(String(flat[i + 1])));
    } catch {
      // edited by hand: the effect is sent
    }
  }
  return journal;
}

function tokenOf(lease: Lease): string {
  return `${lease.fence}:${lease.owner}`;
}
