import { RecentKeys } from '../recent-keys';
import { HISTORY_LIMIT, LOG_LIMIT, isLive, type HistoryEntry, type SessionLogEntry, type SessionRecord } from '../../model/session';
import { KeptLines } from './kept-lines';
import type { ContextLike } from '../../model/red';
import type { Say } from '../../model/texts';
import { SingleProcessLeases } from '../local-leases';
import { linesToAppend, logToAppend, recordText, upgradeSession } from '../record-check';
import {
  LeaseLost,
  StoreUnavailable,
  type ChannelCount,
  type Claimed,
  type ConversationRef,
  type Lease,
  type InboundItem,
  type NewInboundItem,
  type SessionStore,
  type SessionTimer,
  type StepCommit,
  type CommitOutcome,
} from '../session-store';

/** A Node-RED context store the Sessions are copied to at every step, so a restart finds them. */
export interface ContextMirror {
  context: ContextLike;
  storeName: string;
  log: { warn(line: string): void; error(line: string): void };
  say: Say;
}

const KEY_PREFIX = 'session_';
/** The mirror's key of a Session's history, beside its record (format 2 keeps it apart). */
const HISTORY_PREFIX = 'history_';
/** The mirror's key of a Session's log, beside its record (format 3 keeps it apart). */
const LOG_PREFIX = 'log_';
const SEEN_MAX = 20_000;
/** Paced keys kept (one per Environment that places calls). */
const SLOTS_MAX = 1_000;
/**
 * Received messages kept and not yet handled. Past it a new one is refused (its webhook answers
 * 503, as with any store that cannot take it) rather than memory growing for as long as steps
 * cannot run (flows stopped, a flow that never finishes a step).
 */
export const WAITING_ITEMS_MAX = 10_000;
/**
 * Effect outcomes kept across the steps in progress. Past it an effect's outcome is not kept: a
 * step cut by a deploy after it would send that one again (a crash loses this store whole anyway).
 */
export const EFFECTS_MAX = 50_000;

/**
 * Everything in this process's memory: the test chat's Sessions, and Environments whose
 * `sessionStore` names a Node-RED context store that cannot keep the durable promise (memory, or
 * localfilesystem with its flush interval). With a mirror, waiting Sessions are copied to that
 * context store and restored from it after a restart, as far as that store kept them.
 */
export class MemoryStore extends SingleProcessLeases implements SessionStore {
  readonly durable = false;
  readonly shared = false;
  private readonly inbound = new Map<string, InboundItem[]>();
  /** Kept as text, so a step that is not committed leaves the stored Session as it was. */
  private readonly sessions = new Map<string, StoredSession>();
  /** Each live Session's history lines, the last HISTORY_LIMIT. */
  private readonly histories = new KeptLines(HISTORY_LIMIT);
  /** Each live Session's log entries, the last LOG_LIMIT. */
  private readonly logs = new KeptLines(LOG_LIMIT);
  private readonly conversations = new Map<string, string>();
  /** The ids of the live Sessions of an Environment and far party (`liveWith`), kept with `sessions`. */
  private readonly withPerson = new Map<string, Set<string>>();
  private readonly timers = new Map<string, Array<SessionTimer & ConversationRef>>();
  private readonly seenKeys = new RecentKeys(Number.POSITIVE_INFINITY, SEEN_MAX);
  /** Paces by key (`takeSlot`): when the next slot begins. */
  private readonly slots = new Map<string, number>();
  private seq = 0;
  /** How many items `inbound` holds. */
  private waitingItems = 0;
  /** When each item waiting was first handed to a step (`InboundItem.again`); dropped when it is consumed. */
  private readonly handedOut = new Map<number, number>();
  /** The effects journal of each item waiting whose step recorded one, by seq; dropped with its step. */
  private readonly journals = new Map<number, Map<string, unknown>>();
  /** How many outcomes `journals` holds (EFFECTS_MAX). */
  private effectsKept = 0;
  /** Resolves once the mirror's Sessions are loaded. */
  readonly restored: Promise<number>;

  constructor(
    readonly description: string,
    private mirror?: ContextMirror,
  ) {
    super();
    this.restored = mirror ? this.restore(mirror) : Promise.resolve(0);
  }

  /** A redeployed Environment node hands over its new context object. */
  rebind(mirror: ContextMirror): void {
    this.mirror = mirror;
  }

  async record(item: NewInboundItem): Promise<{ seq: number } | 'duplicate'> {
    // Before the dedupe key is taken: a message refused now is not a duplicate when it comes again.
    if (this.waitingItems >= WAITING_ITEMS_MAX)
      throw new StoreUnavailable(
        `the Session store (${this.description}) holds ${WAITING_ITEMS_MAX} received messages not yet handled; new ones are refused until steps handle them`,
      );
    if (item.dedupe && this.seenKeys.seen(item.dedupe.key, item.dedupe.ttlMs)) return 'duplicate';
    return this.enqueue(item);
  }

  /** Queues an item in its conversation (a due timer's too: it belongs to a Session already kept, so it is not refused). */
  private enqueue(item: NewInboundItem): { seq: number } {
    const entry: InboundItem = {
      environment: item.environment,
      conversation: item.conversation,
      seq: ++this.seq,
      kind: item.kind,
      payload: item.payload,
      at: Date.now(),
    };
    const key = keyOf(item);
    const queue = this.inbound.get(key);
    if (queue) queue.push(entry);
    else this.inbound.set(key, [entry]);
    this.waitingItems += 1;
    return { seq: entry.seq };
  }

  async next(ref: ConversationRef, handOut?: boolean): Promise<InboundItem | undefined> {
    const item = this.inbound.get(keyOf(ref))?.[0];
    if (!item || !handOut) return item;
    const since = this.handedOut.get(item.seq);
    if (since === undefined) {
      this.handedOut.set(item.seq, Date.now());
      return item;
    }
    return { ...item, again: { since, effects: new Map(this.journals.get(item.seq)) } };
  }

  override async claimNext(ref: ConversationRef, owner: string): Promise<Claimed | undefined> {
    const lease = this.leases.claim(ref, owner);
    return lease && { lease, item: await this.next(ref, true) };
  }

  async recordEffect(lease: Lease, _conversation: ConversationRef, seq: number, key: string, outcome: unknown): Promise<void> {
    if (!this.leases.holds(lease)) throw new LeaseLost(lease);
    let journal = this.journals.get(seq);
    if (!journal) this.journals.set(seq, (journal = new Map()));
    if (!journal.has(key)) {
      if (this.effectsKept >= EFFECTS_MAX) return;
      this.effectsKept++;
    }
    // A copy, as a durable store keeps it: what the flow does with the outcome afterwards is not in it.
    journal.set(key, JSON.parse(JSON.stringify(outcome ?? null)) as unknown);
  }

  async effectsOf(_conversation: ConversationRef, seq: number): Promise<Map<string, unknown>> {
    return new Map(this.journals.get(seq));
  }

  /** An item's step is over (consumed, or to run as a new step): its journal goes. */
  private dropJournal(seq: number): void {
    const journal = this.journals.get(seq);
    if (journal) this.effectsKept -= journal.size;
    this.journals.delete(seq);
  }

  protected hasItem(ref: ConversationRef): boolean {
    return Boolean(this.inbound.get(keyOf(ref))?.length);
  }

  async pending(seq: number): Promise<boolean> {
    for (const queue of this.inbound.values()) if (queue.some((item) => item.seq === seq)) return true;
    return false;
  }

  async liveSession(ref: ConversationRef): Promise<SessionRecord | undefined> {
    const id = this.conversations.get(keyOf(ref));
    return id ? this.read(id) : undefined;
  }

  async sessionById(id: string): Promise<SessionRecord | undefined> {
    return this.read(id);
  }

  async history(sessionId: string): Promise<HistoryEntry[]> {
    return this.histories.read<HistoryEntry>(sessionId);
  }

  async sessionLog(sessionId: string): Promise<SessionLogEntry[]> {
    return this.logs.read<SessionLogEntry>(sessionId);
  }

  async commit(step: StepCommit): Promise<CommitOutcome> {
    if (!this.leases.holds(step.lease)) throw new LeaseLost(step.lease);
    if (step.consumed !== undefined) {
      const key = keyOf(step.lease);
      const before = this.inbound.get(key)?.length ?? 0;
      const queue = this.inbound.get(key)?.filter((item) => item.seq !== step.consumed);
      if (queue?.length) this.inbound.set(key, queue);
      else this.inbound.delete(key);
      this.waitingItems -= before - (queue?.length ?? 0);
      this.handedOut.delete(step.consumed);
      this.dropJournal(step.consumed);
    }
    if (step.journal !== undefined) {
      this.handedOut.delete(step.journal);
      this.dropJournal(step.journal);
    }
    for (const mark of step.marks ?? []) this.seenKeys.remember(mark.key, mark.ttlMs);
    const { session } = step;
    if (!session) return;
    const conversation = keyOf({ environment: session.environment, conversation: session.key });
    this.timers.delete(session.id);
    const before = this.sessions.get(session.id)?.conversation;
    if (before && before !== conversation && this.conversations.get(before) === session.id) this.conversations.delete(before);
    this.unindexPerson(session.id);
    const appended = { history: false, log: false };
    if (isLive(session)) {
      const previous = this.conversations.get(conversation);
      if (previous && previous !== session.id) {
        this.unindexPerson(previous);
        this.sessions.delete(previous);
        this.histories.delete(previous);
        this.logs.delete(previous);
      }
      this.sessions.set(session.id, stored(session));
      this.indexPerson(session);
      appended.history = this.histories.append(session.id, linesToAppend(session));
      appended.log = this.logs.append(session.id, logToAppend(session));
      this.conversations.set(conversation, session.id);
      if (step.timers?.length) {
        this.timers.set(
          session.id,
          step.timers.map((t) => ({ ...t, environment: session.environment, conversation: session.key })),
        );
      }
    } else {
      this.sessions.delete(session.id);
      this.histories.delete(session.id);
      this.logs.delete(session.id);
      if (this.conversations.get(conversation) === session.id) this.conversations.delete(conversation);
    }
    await this.mirrorStep(session, appended);
  }

  async takeDueTimers(now: number, limit: number): Promise<ConversationRef[]> {
    const refs: ConversationRef[] = [];
    for (const [sessionId, timers] of this.timers) {
      if (refs.length >= limit) break;
      const due = timers.filter((t) => t.due <= now);
      if (!due.length) continue;
      const rest = timers.filter((t) => t.due > now);
      if (rest.length) this.timers.set(sessionId, rest);
      else this.timers.delete(sessionId);
      for (const timer of due) {
        const ref = { environment: timer.environment, conversation: timer.conversation };
        this.enqueue({ ...ref, kind: timer.kind, payload: { sessionId, due: timer.due, wait: timer.payload } });
        refs.push(ref);
      }
    }
    return refs;
  }

  async orphans(limit: number): Promise<ConversationRef[]> {
    const refs: ConversationRef[] = [];
    for (const queue of this.inbound.values()) {
      const ref = { environment: queue[0].environment, conversation: queue[0].conversation };
      if (!this.leases.isHeld(ref)) refs.push(ref);
      if (refs.length >= limit) break;
    }
    return refs;
  }

  async list(filter: { environment?: string; waitingAt?: string[]; limit: number }): Promise<SessionRecord[]> {
    const nodes = filter.waitingAt ? new Set(filter.waitingAt) : undefined;
    return [...this.sessions.values()]
      .filter((s) => (!filter.environment || s.environment === filter.environment) && (!nodes || nodes.has(s.waitingNode ?? '')))
      .sort((a, b) => b.lastActivity - a.lastActivity)
      .slice(0, filter.limit)
      .map((s) => JSON.parse(s.json) as SessionRecord);
  }

  async count(filter: { environment?: string }): Promise<number> {
    if (!filter.environment) return this.sessions.size;
    let n = 0;
    for (const s of this.sessions.values()) if (s.environment === filter.environment) n++;
    return n;
  }

  async waitingByNode(): Promise<Map<string, number>> {
    const counts = new Map<string, number>();
    for (const s of this.sessions.values()) {
      if (s.waitingNode) counts.set(s.waitingNode, (counts.get(s.waitingNode) ?? 0) + 1);
    }
    return counts;
  }

  async liveWith(environment: string, person: string): Promise<SessionRecord[]> {
    const ids = this.withPerson.get(personKey(environment, person)) ?? [];
    return [...ids].map((id) => this.read(id)).filter((s): s is SessionRecord => s !== undefined);
  }

  private indexPerson(session: SessionRecord): void {
    if (!session.person) return;
    const key = personKey(session.environment, session.person);
    let ids = this.withPerson.get(key);
    if (!ids) this.withPerson.set(key, (ids = new Set()));
    ids.add(session.id);
  }

  /** Takes a Session out of the person index, by what it was stored with. */
  private unindexPerson(id: string): void {
    const found = this.sessions.get(id);
    if (!found?.person) return;
    const key = personKey(found.environment, found.person);
    const ids = this.withPerson.get(key);
    ids?.delete(id);
    if (ids && !ids.size) this.withPerson.delete(key);
  }

  /**
   * Counted from the Sessions at each call (a scrape), not kept as the stores on disk and in Redis
   * keep theirs: these Sessions are in this process's memory already, so counting them reads no
   * file and holds up no shared server (as `count` and `waitingByNode` do here), and a count taken
   * from them cannot drift from them.
   */
  async countByChannel(): Promise<ChannelCount[]> {
    const counts = new Map<string, ChannelCount>();
    for (const s of this.sessions.values()) {
      const key = `${s.environment}\u0000${s.channel}`;
      let count = counts.get(key);
      if (!count) counts.set(key, (count = { environment: s.environment, channel: s.channel, live: 0, waiting: 0 }));
      count.live++;
      if (s.waitingNode) count.waiting++;
    }
    return [...counts.values()];
  }

  async seen(key: string, ttlMs: number): Promise<boolean> {
    return this.seenKeys.seen(key, ttlMs);
  }

  async remembered(key: string): Promise<boolean> {
    return this.seenKeys.has(key);
  }

  async takeSlot(key: string, intervalMs: number, now: number): Promise<number> {
    const at = Math.max(now, this.slots.get(key) ?? 0);
    // Re-inserted so the oldest key is first; a key is an Environment's pace, so few are ever kept.
    this.slots.delete(key);
    this.slots.set(key, at + intervalMs);
    if (this.slots.size > SLOTS_MAX) this.slots.delete(this.slots.keys().next().value as string);
    return at;
  }

  async close(): Promise<void> {}

  /** A Session as a step reads it: its record alone, without its history. */
  private read(id: string): SessionRecord | undefined {
    const found = this.sessions.get(id);
    return found ? (JSON.parse(found.json) as SessionRecord) : undefined;
  }

  /**
   * The step copied to the context store: the record (as stored, without its history and log) at
   * every step, the history and the log each only when the step added to it (the whole list: a
   * context store keeps values, not lists to append to). A Session that no longer waits is taken
   * out with its history and log.
   */
  private async mirrorStep(session: SessionRecord, appended: { history: boolean; log: boolean }): Promise<void> {
    const mirror = this.mirror;
    if (!mirror) return;
    const waiting = session.state === 'waiting';
    await this.mirrorSet(mirror, KEY_PREFIX + session.id, waiting ? (JSON.parse(recordText(session)) as unknown) : undefined, session.id);
    if (!waiting || appended.history) {
      await this.mirrorSet(mirror, HISTORY_PREFIX + session.id, waiting ? this.histories.read(session.id) : undefined, session.id);
    }
    if (!waiting || appended.log) {
      await this.mirrorSet(mirror, LOG_PREFIX + session.id, waiting ? this.logs.read(session.id) : undefined, session.id);
    }
  }

  private mirrorSet(mirror: ContextMirror, key: string, value: unknown, id: string): Promise<void> {
    return new Promise((resolve, reject) => {
      mirror.context.set(key, value, mirror.storeName, (err) => {
        if (err) reject(new StoreUnavailable(`context store "${mirror.storeName}" could not save Session ${id}: ${err.message}`, err));
        else resolve();
      });
    });
  }

  private async restore(mirror: ContextMirror): Promise<number> {
    const keys = await new Promise<string[]>((resolve) => {
      mirror.context.keys(mirror.storeName, (err, found) => {
        if (err) mirror.log.error(`[channel-sessions] ${mirror.say('runtime.log.store.mirrorNotListed', { store: mirror.storeName, message: err.message })}`);
        resolve(err ? [] : (found ?? []));
      });
    });
    let restored = 0;
    for (const key of keys.filter((k) => k.startsWith(KEY_PREFIX))) {
      const value = await new Promise<unknown>((resolve) => mirror.context.get(key, mirror.storeName, (err, found) => resolve(err ? undefined : found)));
      const read = upgradeSession(value);
      if ('problem' in read) {
        mirror.log.error(`[channel-sessions] ${mirror.say('runtime.log.store.mirrorMalformed', { store: mirror.storeName, key, problem: read.problem })}`);
        continue;
      }
      const session = read.session;
      if (session.state !== 'waiting') continue;
      this.unindexPerson(session.id);
      this.sessions.set(session.id, stored(session));
      this.indexPerson(session);
      await this.restoreLines(mirror, session, HISTORY_PREFIX, this.histories, session.historyLines, session.newHistory);
      await this.restoreLines(mirror, session, LOG_PREFIX, this.logs, session.logLines, session.newLog);
      this.conversations.set(keyOf({ environment: session.environment, conversation: session.key }), session.id);
      restored++;
    }
    return restored;
  }

  /**
   * A restored Session's history (or log): its lines in the context store, or those its older
   * record carried, which are copied there at once (the record is kept in memory without them, so
   * a later step that adds no line would otherwise leave the context store without them).
   */
  private async restoreLines(
    mirror: ContextMirror,
    session: SessionRecord,
    prefix: string,
    kept: KeptLines,
    last: number,
    carried: unknown[] | undefined,
  ): Promise<void> {
    const lines =
      carried ??
      (await new Promise<unknown>((resolve) => mirror.context.get(prefix + session.id, mirror.storeName, (err, found) => resolve(err ? undefined : found))));
    if (!Array.isArray(lines) || !lines.length) return;
    kept.restore(session.id, last, lines);
    if (carried) {
      await this.mirrorSet(mirror, prefix + session.id, carried, session.id).catch((err: Error) =>
        mirror.log.error(`[channel-sessions] ${mirror.say('runtime.log.store.mirrorFailed', { store: mirror.storeName, message: err.message })}`),
      );
    }
  }
}

interface StoredSession {
  json: string;
  conversation: string;
  environment: string;
  channel: string;
  person?: string;
  lastActivity: number;
  waitingNode?: string;
}

function stored(session: SessionRecord): StoredSession {
  return {
    json: recordText(session),
    conversation: keyOf({ environment: session.environment, conversation: session.key }),
    environment: session.environment,
    channel: session.channel,
    person: session.person,
    lastActivity: session.lastActivity,
    waitingNode: session.state === 'waiting' ? session.waitingAt?.nodeId : undefined,
  };
}

function personKey(environment: string, person: string): string {
  return `${environment}\u0000${person}`;
}

function keyOf(ref: ConversationRef): string {
  return `${ref.environment}\u0000${ref.conversation}`;
}
