import { HISTORY_LIMIT, LOG_LIMIT, type HistoryEntry, type SessionLogEntry, type SessionRecord } from '../../model/session';
import { CheckpointTimer } from './checkpoints';
import { PendingItems } from './pending-items';
import { HandedOut } from './handed-out';
import { closeQuietly, explain, isDamaged, openDatabaseFile, setAside, type DatabaseFileOptions } from './database-file';
import { WriteBatcher, type BatchedWrite, type WriteOutcome } from './group-commit';
import { ITEM_FORMAT, formatOf, linesToAppend, logToAppend, parsedLines, readSessionRecord, recordText } from '../record-check';
import { COUNT_SQL } from './sqlite-counts';
import { SingleProcessLeases } from '../local-leases';
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
  type SessionTimer,
  type StepCommit,
  type CommitOutcome,
} from '../session-store';
import { SQLITE_CANTOPEN, SQLITE_IOERR, SQLITE_READONLY, sqliteCode, type DatabaseConstructor, type DatabaseSync, type StatementSync } from './sqlite';

export interface SqliteStoreOptions extends DatabaseFileOptions {
  /** Conversations with items waiting that are counted at most (pending-items.ts); 100,000 unless a test asks for fewer. */
  pendingLimit?: number;
}

/** How often a store that cannot be opened tries again (each refused webhook would otherwise try). */
const REOPEN_MS = 1000;
/** Errors of the connection rather than of one statement: a new connection may not have them. */
const REOPEN_AFTER: ReadonlySet<number> = new Set([SQLITE_READONLY, SQLITE_IOERR, SQLITE_CANTOPEN]);
/** History lines one INSERT takes at most (a step usually says two or three). */
const HISTORY_ROWS_PER_INSERT = 8;
/** Every kind of timer a Session may have (SessionTimer['kind']). */
const TIMER_KINDS: ReadonlyArray<SessionTimer['kind']> = ['timeout', 'expire'];

/**
 * The durable default: one SQLite database in WAL mode under the Node-RED user dir. Each step is
 * one transaction, so the cost of recording a change does not grow with the number of Sessions.
 * One process owns the file, so the conversation leases live in memory.
 */
export class SqliteStore extends SingleProcessLeases implements SessionStore {
  readonly durable = true;
  readonly shared = false;
  readonly description: string;
  readonly synchronous: 'NORMAL' | 'FULL';
  private connection: Connection | undefined;
  /** Why the last open failed, and when: opens are tried again at most once a second. */
  private openFailure: { at: number; error: StoreUnavailable } | undefined;
  private lastPrune = 0;
  private readonly batcher = new WriteBatcher((writes) => this.runBatch(writes));
  private readonly checkpoints: CheckpointTimer;
  /** Items recorded and not yet consumed, per conversation (pending-items.ts): `hasItem` without a read. */
  private readonly unhandled: PendingItems;
  /** Which items were handed to a step before (`InboundItem.again`), in memory (handed-out.ts). */
  private readonly handed = new HandedOut();

  constructor(
    private readonly Database: DatabaseConstructor,
    private readonly options: SqliteStoreOptions,
  ) {
    super();
    this.unhandled = new PendingItems(options.pendingLimit);
    this.description = `SQLite at ${options.path} (WAL, synchronous=${options.synchronous})`;
    this.checkpoints = new CheckpointTimer(options.path, () => this.connection?.db);
    this.synchronous = options.synchronous;
    try {
      this.open();
    } catch {
      // Said by the engine at the first use (the store refuses until it can be opened), not here.
    }
  }

  private get db(): DatabaseSync {
    return this.open().db;
  }

  private get sql(): Record<string, StatementSync> {
    return this.open().sql;
  }

  /**
   * The connection, opened (again) when there is none: a store that could not be opened or written
   * (a read-only or missing file system at start, a connection SQLite opened read-only) serves
   * again by itself once it can be, without a restart.
   */
  private open(again = true): Connection {
    if (this.connection) return this.connection;
    const now = Date.now();
    if (this.openFailure && now - this.openFailure.at < REOPEN_MS) throw this.openFailure.error;
    let connection: Connection | undefined;
    try {
      connection = connect(this.Database, this.options);
      this.countPending(connection);
      this.handed.opened(Number(connection.sql.highestSeq.get()?.n ?? 0));
      this.connection = connection;
      this.openFailure = undefined;
      return connection;
    } catch (err) {
      if (connection) {
        // The file opened, but reading its recorded messages failed: a damaged page there is set
        // aside like one found while serving, and a new file opened; anything else closes this
        // connection (the next try opens another).
        this.connection = connection;
        if (again && this.setAsideIfDamaged(err)) return this.open(false);
        closeQuietly(connection.db);
        this.connection = undefined;
      }
      const error = new StoreUnavailable(`the Session store (${this.options.path}) could not be opened: ${explain(err, this.options.path)}`, err);
      this.openFailure = { at: now, error };
      throw error;
    }
  }

  /**
   * After an error of the connection rather than of the statement (a handle SQLite opened
   * read-only, an I/O error), a later use opens it again; not at once, since a flood of refused
   * webhooks would open the database for each.
   */
  private failed(err: unknown, message: string): StoreUnavailable {
    const error = new StoreUnavailable(message, err);
    if (this.connection && REOPEN_AFTER.has(sqliteCode(err) ?? -1)) {
      closeQuietly(this.connection.db);
      this.connection = undefined;
      this.openFailure = { at: Date.now(), error };
    }
    return error;
  }

  async record(item: NewInboundItem): Promise<{ seq: number } | 'duplicate'> {
    return this.write('record an inbound message', () => {
      const now = Date.now();
      if (item.dedupe && !this.takeKey(item.dedupe.key, now, item.dedupe.ttlMs)) return 'duplicate' as const;
      const result = this.sql.insertInbound.run(item.environment, item.conversation, item.kind, JSON.stringify(item.payload ?? null), now, ITEM_FORMAT);
      this.unhandled.added(item);
      this.pruneNow(now);
      return { seq: Number(result.lastInsertRowid) };
    });
  }

  async next(ref: ConversationRef, handOut?: boolean): Promise<InboundItem | undefined> {
    for (;;) {
      const row = this.read(() => this.sql.next.get(ref.environment, ref.conversation));
      if (!row) {
        this.unhandled.none(ref);
        return undefined;
      }
      const read = itemFrom(ref, row);
      if ('item' in read) return handOut ? this.handOut(read.item) : read.item;
      await this.setAsideInbound(ref, Number(row.seq), String(row.payload), read.problem);
    }
  }

  /**
   * The lease, the conversation's oldest item and its live Session, the last two read by one
   * statement (the step would read the Session next). When that read fails, or the item cannot be
   * read, it is done as before: `next` takes the item (setting aside what it cannot read), then the
   * step reads the Session, so a damaged Sessions table is found (and the file set aside) only after
   * the item is in hand, and that message is still answered from the new store.
   */
  override async claimNext(ref: ConversationRef, owner: string): Promise<Claimed | undefined> {
    const lease = this.leases.claim(ref, owner);
    if (!lease) return undefined;
    try {
      let row: Record<string, unknown> | undefined;
      try {
        row = this.sql.nextWithLive.get(ref.environment, ref.conversation);
      } catch {
        return { lease, item: await this.next(ref, true) };
      }
      if (!row) {
        this.unhandled.none(ref);
        return { lease, item: undefined };
      }
      const read = itemFrom(ref, row);
      if (!('item' in read)) return { lease, item: await this.next(ref, true) };
      const session = row.sid === null ? undefined : this.sessionFrom({ id: row.sid, record: row.record });
      return { lease, item: this.handOut(read.item), live: { session } };
    } catch (err) {
      // These leases never expire: one kept here would hold the conversation until a restart.
      this.leases.release(lease);
      throw err;
    }
  }

  /** The item goes to a step: marked when it went to one before. */
  private handOut(item: InboundItem): InboundItem {
    const since = this.handed.handOut(item.seq, item.at);
    return since === undefined ? item : { ...item, again: { since } };
  }

  async recordEffect(lease: Lease, _conversation: ConversationRef, seq: number, key: string, outcome: unknown): Promise<void> {
    if (!this.leases.holds(lease)) throw new LeaseLost(lease);
    const text = JSON.stringify(outcome ?? null);
    await this.write('record what a step sent', () => this.sql.putEffect.run(seq, key, text));
  }

  async effectsOf(_conversation: ConversationRef, seq: number): Promise<Map<string, unknown>> {
    const rows = this.read(() => this.sql.effectsOf.all(seq));
    const journal = new Map<string, unknown>();
    for (const row of rows) {
      try {
        journal.set(String(row.key), JSON.parse(String(row.outcome)));
      } catch {
        // An outcome that is not JSON (edited by hand) is as if not recorded: the effect is sent.
      }
    }
    return journal;
  }

  protected hasItem(ref: ConversationRef): boolean {
    if (this.unhandled.stale() && this.connection) {
      try {
        this.countPending(this.connection);
      } catch {
        // still unknown for the conversations not counted: the worker reads, as before
      }
    }
    return this.unhandled.any(ref);
  }

  /**
   * The items waiting per conversation, as the file has them. Run between writes (a write runs
   * whole, synchronously, in its batch), so every item counted so far is in the file or was undone.
   */
  private countPending(connection: Connection): void {
    this.unhandled.load(
      connection.sql.pendingByConversation
        .all()
        .map((row) => ({ environment: String(row.environment), conversation: String(row.conversation), n: Number(row.n) })),
    );
  }

  async pending(seq: number): Promise<boolean> {
    return Boolean(this.read(() => this.sql.pending.get(seq)));
  }

  async liveSession(ref: ConversationRef): Promise<SessionRecord | undefined> {
    const row = this.read(() => this.sql.live.get(ref.environment, ref.conversation));
    return row ? this.sessionFrom(row) : undefined;
  }

  async sessionById(id: string): Promise<SessionRecord | undefined> {
    const row = this.read(() => this.sql.byId.get(id));
    return row ? this.sessionFrom(row) : undefined;
  }

  async history(sessionId: string): Promise<HistoryEntry[]> {
    return parsedLines<HistoryEntry>(this.read(() => this.sql.readHistory.all(sessionId)).map((row) => row.line));
  }

  async sessionLog(sessionId: string): Promise<SessionLogEntry[]> {
    return parsedLines<SessionLogEntry>(this.read(() => this.sql.readLog.all(sessionId)).map((row) => row.entry));
  }

  async commit(step: StepCommit): Promise<CommitOutcome> {
    if (!this.leases.holds(step.lease)) throw new LeaseLost(step.lease);
    let countedAt: number | undefined;
    await this.write('save a Session step', () => {
      const { session } = step;
      countedAt = this.unhandled.loaded();
      if (step.consumed !== undefined) {
        this.sql.consume.run(step.consumed);
        this.sql.dropEffects.run(step.consumed);
      }
      if (step.journal !== undefined && step.journal !== step.consumed) this.sql.dropEffects.run(step.journal);
      for (const mark of step.marks ?? []) this.sql.seenPut.run(mark.key, Date.now() + mark.ttlMs);
      if (!session) return;
      if (session.state === 'waiting' || session.state === 'running') {
        this.saveSession(session);
        this.saveTimers(session, step.timers ?? []);
      } else {
        this.sql.clearTimers.run(session.id);
        this.sql.dropHistory.run(session.id);
        this.sql.dropLog.run(session.id);
        this.sql.remove.run(session.id);
      }
    });
    if (step.consumed !== undefined) {
      this.unhandled.consumed(step.lease, countedAt);
      this.handed.over(step.consumed, true);
    }
    if (step.journal !== undefined && step.journal !== step.consumed) this.handed.over(step.journal, false);
    // Not let go here: the worker's releaseIfIdle answers from the counts, without a read.
    return undefined;
  }

  /**
   * A Session's row, written with as little as a step changes: most steps leave it in its
   * conversation, waiting at the node it waited at before, so only its record and activity change
   * (no index but the activity's is rewritten, no count trigger runs). Otherwise the whole row, as
   * before: the Session is new, waits elsewhere, or moved to another conversation (a team-chat
   * Session that opened its thread), where an older Session of that conversation may be in the way.
   */
  private saveSession(session: SessionRecord): void {
    const record = recordText(session);
    const node = session.waitingAt?.nodeId ?? null;
    const person = session.person ?? null;
    const inPlace = this.sql.updateInPlace.run(session.lastActivity, record, session.id, session.environment, session.key, node, session.channel, person);
    if (!Number(inPlace.changes)) {
      // A Session that replaced an older one of the same conversation (the older ended in an earlier step).
      this.sql.dropConversationHistory.run(session.environment, session.key, session.id);
      this.sql.dropConversationLog.run(session.environment, session.key, session.id);
      this.sql.dropConversation.run(session.environment, session.key, session.id);
      this.sql.upsert.run(session.id, session.environment, session.key, node, session.lastActivity, record, session.channel, person);
    }
    this.appendHistory(session);
    this.appendLog(session);
  }

  /** The step's history lines, each in its row (one it already has is left as it is); the oldest beyond the limit dropped. */
  private appendHistory(session: SessionRecord): void {
    const lines = linesToAppend(session);
    if (!lines.length) return;
    // A step says a few lines (the person's, the reply, the next prompt): one statement for up to
    // HISTORY_ROWS_PER_INSERT of them, rather than one each.
    for (let i = 0; i < lines.length; i += HISTORY_ROWS_PER_INSERT) {
      const some = lines.slice(i, i + HISTORY_ROWS_PER_INSERT);
      this.appendStatement(some.length).run(...some.flatMap(({ n, line }) => [session.id, n, JSON.stringify(line)]));
    }
    if (session.historyLines > HISTORY_LIMIT) this.sql.trimHistory.run(session.id, session.historyLines - HISTORY_LIMIT);
  }

  /** The step's log entries (a few steps write one: a warning, a message's status), as its history lines. */
  private appendLog(session: SessionRecord): void {
    const entries = logToAppend(session);
    if (!entries.length) return;
    for (const { n, line } of entries) this.sql.appendLog.run(session.id, n, JSON.stringify(line));
    if (session.logLines > LOG_LIMIT) this.sql.trimLog.run(session.id, session.logLines - LOG_LIMIT);
  }

  /** The INSERT of `rows` history lines, prepared once per connection and row count. */
  private appendStatement(rows: number): StatementSync {
    const connection = this.open();
    let statement = connection.appendHistory[rows];
    if (!statement) {
      const values = Array.from({ length: rows }, () => '(?, ?, ?)').join(', ');
      statement = connection.db.prepare(`INSERT OR IGNORE INTO history (session_id, n, line) VALUES ${values}`);
      connection.appendHistory[rows] = statement;
    }
    return statement;
  }

  /**
   * The step's timers, each kind in its row; a kind the step no longer has is removed. A row is
   * written only when it has to be: a Session's idle expiry is due later at every step (its last
   * activity moved on), and moving the row moves its entry in `timers_due`, a page of that index
   * written at every message. So an `expire` row of the same conversation that is due no later
   * than the step's is left as it is: it fires early, and the engine's step for it finds the
   * Session active since and arms the expiry again at its real due (EXPIRE in
   * engine/step-runner.ts). One due later than the step's (a shorter idle timeout) is moved
   * earlier. A `timeout` row is left when its due and payload are the step's. Reading the row is
   * a look-up by its primary key, on a page the step's writes have in the cache anyway.
   */
  private saveTimers(session: SessionRecord, timers: SessionTimer[]): void {
    for (const kind of TIMER_KINDS) {
      const timer = timers.find((t) => t.kind === kind);
      if (!timer) {
        this.sql.dropTimer.run(session.id, kind);
        continue;
      }
      const payload = JSON.stringify(timer.payload ?? null);
      const row = this.sql.timerOf.get(session.id, kind);
      const inPlace = row !== undefined && String(row.environment) === session.environment && String(row.conversation) === session.key;
      if (inPlace && kind === 'expire' && Number(row.due) <= timer.due) continue;
      if (inPlace && Number(row.due) === timer.due && String(row.payload) === payload) continue;
      this.sql.putTimer.run(session.id, kind, timer.due, session.environment, session.key, payload);
    }
  }

  async takeDueTimers(now: number, limit: number): Promise<ConversationRef[]> {
    return this.write('move due timers', () => {
      const rows = this.sql.dueTimers.all(now, limit);
      const refs: ConversationRef[] = [];
      for (const row of rows) {
        const ref = { environment: String(row.environment), conversation: String(row.conversation) };
        this.sql.dropTimer.run(row.session_id, row.kind);
        const payload = `{"sessionId":${JSON.stringify(String(row.session_id))},"due":${Number(row.due)},"wait":${String(row.payload)}}`;
        this.sql.insertInbound.run(ref.environment, ref.conversation, String(row.kind), payload, now, ITEM_FORMAT);
        this.unhandled.added(ref);
        refs.push(ref);
      }
      return refs;
    });
  }

  async orphans(limit: number): Promise<ConversationRef[]> {
    const rows = this.read(() => this.sql.conversationsWithItems.all(limit));
    return rows.map((row) => ({ environment: String(row.environment), conversation: String(row.conversation) })).filter((ref) => !this.leases.isHeld(ref));
  }

  async list(filter: { environment?: string; waitingAt?: string[]; limit: number }): Promise<SessionRecord[]> {
    const where: string[] = [];
    const params: unknown[] = [];
    if (filter.environment) {
      where.push('environment = ?');
      params.push(filter.environment);
    }
    if (filter.waitingAt) {
      where.push(`waiting_node IN (${filter.waitingAt.map(() => '?').join(', ') || 'NULL'})`);
      params.push(...filter.waitingAt);
    }
    const sql = `SELECT id, record FROM sessions ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY activity DESC LIMIT ?`;
    const rows = this.read(() => this.db.prepare(sql).all(...params, filter.limit));
    return rows.map((row) => this.sessionFrom(row)).filter((s): s is SessionRecord => s !== undefined);
  }

  async count(filter: { environment?: string }): Promise<number> {
    const row = this.read(() => (filter.environment ? this.sql.countEnv.get(filter.environment) : this.sql.count.get()));
    return Number(row?.n ?? 0);
  }

  async waitingByNode(): Promise<Map<string, number>> {
    const rows = this.read(() => this.sql.byNode.all());
    return new Map(rows.map((row) => [String(row.node), Number(row.n)]));
  }

  async liveWith(environment: string, person: string): Promise<SessionRecord[]> {
    const rows = this.read(() => this.sql.withPerson.all(environment, person));
    return rows.map((row) => this.sessionFrom(row)).filter((s): s is SessionRecord => s !== undefined);
  }

  async countByChannel(): Promise<ChannelCount[]> {
    const rows = this.read(() => this.sql.byChannel.all());
    return rows.map((row) => ({ environment: String(row.environment), channel: String(row.channel), live: Number(row.live), waiting: Number(row.waiting) }));
  }

  async seen(key: string, ttlMs: number): Promise<boolean> {
    return this.write('remember a handled message', () => !this.takeKey(key, Date.now(), ttlMs));
  }

  async remembered(key: string): Promise<boolean> {
    const row = this.read(() => this.sql.seenGet.get(key));
    return !!row && Number(row.expires) >= Date.now();
  }

  async takeSlot(key: string, intervalMs: number, now: number): Promise<number> {
    return this.write('pace an action', () => {
      const row = this.sql.paceGet.get(key);
      const at = Math.max(now, Number(row?.next ?? 0));
      this.sql.pacePut.run(key, at + intervalMs);
      return at;
    });
  }

  async close(): Promise<void> {
    this.batcher.flush();
    this.checkpoints.stop();
    if (this.connection) closeQuietly(this.connection.db);
    this.connection = undefined;
  }

  /** A malformed record never wedges its conversation: it is set aside, named in the log, and the conversation goes on without it. */
  private sessionFrom(row: Record<string, unknown>): SessionRecord | undefined {
    const checked = readSessionRecord(String(row.record));
    if ('session' in checked) return checked.session;
    const id = String(row.id);
    try {
      this.transaction(() => {
        this.sql.setAside.run('session', id, checked.problem, String(row.record), Date.now());
        this.sql.clearTimers.run(id);
        this.sql.dropHistory.run(id);
        this.sql.dropLog.run(id);
        this.sql.remove.run(id);
      });
      this.options.log.error(
        `[channel-sessions] ${this.options.say('runtime.log.store.sessionSetAsideTable', { id, where: this.options.path, problem: checked.problem })}`,
      );
    } catch (err) {
      this.options.log.error(
        `[channel-sessions] ${this.options.say('runtime.log.store.sessionNotSetAside', { id, problem: checked.problem, message: (err as Error).message })}`,
      );
    }
    return undefined;
  }

  private async setAsideInbound(ref: ConversationRef, seq: number, content: string, reason: string): Promise<void> {
    let countedAt: number | undefined;
    await this.write('set aside an unreadable message', () => {
      countedAt = this.unhandled.loaded();
      this.sql.setAside.run('inbound', String(seq), reason, content, Date.now());
      this.sql.consume.run(seq);
      this.sql.dropEffects.run(seq);
    });
    this.unhandled.consumed(ref, countedAt);
    this.handed.over(seq, true);
    this.options.log.error(`[channel-sessions] ${this.options.say('runtime.log.store.itemSetAsideTable', { seq, where: this.options.path, reason })}`);
  }

  /**
   * Remembers a dedupe key for `ttlMs` unless it is remembered now: true when it was taken (it was
   * not there, or its time was up), false when it is a duplicate. One statement, inside a write.
   */
  private takeKey(key: string, now: number, ttlMs: number): boolean {
    return Number(this.sql.seenTake.run(key, now + ttlMs, now).changes) > 0;
  }

  private pruneNow(now: number): void {
    if (now - this.lastPrune < 60_000) return;
    this.lastPrune = now;
    this.sql.pruneSeen.run(now);
  }

  private read<T>(work: () => T, again = true): T {
    try {
      return work();
    } catch (err) {
      if (err instanceof StoreUnavailable) throw err;
      if (again && this.setAsideIfDamaged(err)) return this.read(work, false);
      throw this.failed(err, `the Session store (${this.options.path}) could not be read: ${explain(err, this.options.path)}`);
    }
  }

  /** A write, run with the others asked for in the same turn of the event loop (group commit). */
  private write<T>(what: string, work: () => T): Promise<T> {
    return this.batcher.add(what, work);
  }

  /**
   * A batch of writes in one transaction. Each runs in a savepoint, so one that throws is undone
   * alone and the others are kept; an error that ends the transaction (a full disk, an I/O error)
   * fails them all, and none was resolved before.
   */
  private runBatch(writes: BatchedWrite[], again = true): WriteOutcome[] {
    let outcomes: WriteOutcome[];
    try {
      outcomes = writes.length === 1 ? [{ value: this.transaction(writes[0].work) }] : this.transaction(() => writes.map((write) => this.inSavepoint(write)));
    } catch (err) {
      if (err instanceof StoreUnavailable) throw err;
      if (again && this.setAsideIfDamaged(err)) return this.runBatch(writes, false);
      return writes.map((write) => ({ error: this.writeFailed(write.what, err) }));
    }
    this.checkpoints.wrote();
    // A write undone alone is said like any failed write, now that the transaction is over (saying
    // it may close the connection).
    return outcomes.map((outcome, i) => ('error' in outcome ? { error: this.writeFailed(writes[i].what, outcome.error) } : outcome));
  }

  private inSavepoint(write: BatchedWrite): WriteOutcome {
    this.db.exec('SAVEPOINT write');
    try {
      const value = write.work();
      this.db.exec('RELEASE write');
      return { value };
    } catch (err) {
      try {
        this.db.exec('ROLLBACK TO write');
        this.db.exec('RELEASE write');
      } catch {
        // SQLite ended the whole transaction (SQLITE_FULL and the like): the batch fails
        throw err;
      }
      return { error: err };
    }
  }

  private writeFailed(what: string, err: unknown): StoreUnavailable {
    if (err instanceof StoreUnavailable) return err;
    return this.failed(err, `the Session store (${this.options.path}) could not ${what}: ${explain(err, this.options.path)}`);
  }

  /**
   * A database found damaged while serving (a page SQLite cannot read) is set aside like one found
   * damaged at open, and a new one started: left in place it would refuse, or acknowledge and never
   * handle, every message of its Environments until someone replaced the file.
   */
  private setAsideIfDamaged(err: unknown): boolean {
    if (!this.connection || !isDamaged(err)) return false;
    closeQuietly(this.connection.db);
    this.connection = undefined;
    try {
      setAside(this.options, err);
      return true;
    } catch {
      return false;
    }
  }

  private transaction<T>(work: () => T): T {
    this.db.exec('BEGIN IMMEDIATE');
    try {
      const result = work();
      this.db.exec('COMMIT');
      return result;
    } catch (err) {
      try {
        this.db.exec('ROLLBACK');
      } catch {
        // SQLite rolls back by itself after some errors (SQLITE_FULL)
      }
      throw err;
    }
  }
}

interface Connection {
  db: DatabaseSync;
  sql: Record<string, StatementSync>;
  /** The history INSERTs by how many lines they take (prepared when first needed). */
  appendHistory: Array<StatementSync | undefined>;
}

/** Opens the database and prepares the statements the store runs. */
function connect(Database: DatabaseConstructor, options: SqliteStoreOptions): Connection {
  const db = openDatabaseFile(Database, options);
  try {
    return { db, sql: prepare(db), appendHistory: [] };
  } catch (err) {
    closeQuietly(db);
    throw err;
  }
}

/** An inbound row as the item it holds, or why it cannot be read (a newer format, a payload that is not JSON). */
function itemFrom(ref: ConversationRef, row: Record<string, unknown>): { item: InboundItem } | { problem: string } {
  const format = formatOf(Number(row.v), ITEM_FORMAT);
  if (format) return { problem: format };
  try {
    return { item: { ...ref, seq: Number(row.seq), kind: String(row.kind), payload: JSON.parse(String(row.payload)), at: Number(row.at) } };
  } catch (err) {
    return { problem: `unreadable payload: ${(err as Error).message}` };
  }
}

function prepare(db: DatabaseSync): Record<string, StatementSync> {
  return {
    insertInbound: db.prepare('INSERT INTO inbound (environment, conversation, kind, payload, at, v) VALUES (?, ?, ?, ?, ?, ?)'),
    seenGet: db.prepare('SELECT expires FROM seen WHERE key = ?'),
    seenPut: db.prepare('INSERT OR REPLACE INTO seen (key, expires) VALUES (?, ?)'),
    // Inserts the key, or renews one whose time is up; changes nothing (0 changes) for a key remembered now.
    seenTake: db.prepare('INSERT INTO seen (key, expires) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET expires = excluded.expires WHERE seen.expires < ?'),
    paceGet: db.prepare('SELECT next FROM pace WHERE key = ?'),
    pacePut: db.prepare('INSERT OR REPLACE INTO pace (key, next) VALUES (?, ?)'),
    next: db.prepare('SELECT seq, kind, payload, at, v FROM inbound WHERE environment = ? AND conversation = ? ORDER BY seq LIMIT 1'),
    nextWithLive: db.prepare(`SELECT i.seq, i.kind, i.payload, i.at, i.v, s.id AS sid, s.record FROM inbound i
      LEFT JOIN sessions s ON s.environment = i.environment AND s.conversation = i.conversation
      WHERE i.environment = ? AND i.conversation = ? ORDER BY i.seq LIMIT 1`),
    pending: db.prepare('SELECT 1 AS found FROM inbound WHERE seq = ?'),
    pendingByConversation: db.prepare('SELECT environment, conversation, COUNT(*) AS n FROM inbound GROUP BY environment, conversation'),
    consume: db.prepare('DELETE FROM inbound WHERE seq = ?'),
    highestSeq: db.prepare('SELECT MAX(seq) AS n FROM inbound'),
    putEffect: db.prepare('INSERT OR REPLACE INTO effects (seq, key, outcome) VALUES (?, ?, ?)'),
    effectsOf: db.prepare('SELECT key, outcome FROM effects WHERE seq = ?'),
    dropEffects: db.prepare('DELETE FROM effects WHERE seq = ?'),
    live: db.prepare('SELECT id, record FROM sessions WHERE environment = ? AND conversation = ?'),
    byId: db.prepare('SELECT id, record FROM sessions WHERE id = ?'),
    withPerson: db.prepare('SELECT id, record FROM sessions WHERE environment = ? AND person = ?'),
    updateInPlace: db.prepare(
      'UPDATE sessions SET activity = ?, record = ? WHERE id = ? AND environment = ? AND conversation = ? AND waiting_node IS ? AND channel = ? AND person IS ?',
    ),
    upsert: db.prepare(`INSERT INTO sessions (id, environment, conversation, waiting_node, activity, record, channel, person) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
      ON CONFLICT(id) DO UPDATE SET environment = excluded.environment, conversation = excluded.conversation, waiting_node = excluded.waiting_node,
        activity = excluded.activity, record = excluded.record, channel = excluded.channel, person = excluded.person`),
    dropConversation: db.prepare('DELETE FROM sessions WHERE environment = ? AND conversation = ? AND id <> ?'),
    dropConversationHistory: db.prepare(
      'DELETE FROM history WHERE session_id IN (SELECT id FROM sessions WHERE environment = ? AND conversation = ? AND id <> ?)',
    ),
    trimHistory: db.prepare('DELETE FROM history WHERE session_id = ? AND n <= ?'),
    dropHistory: db.prepare('DELETE FROM history WHERE session_id = ?'),
    readHistory: db.prepare('SELECT line FROM history WHERE session_id = ? ORDER BY n'),
    dropConversationLog: db.prepare(
      'DELETE FROM session_log WHERE session_id IN (SELECT id FROM sessions WHERE environment = ? AND conversation = ? AND id <> ?)',
    ),
    appendLog: db.prepare('INSERT OR IGNORE INTO session_log (session_id, n, entry) VALUES (?, ?, ?)'),
    trimLog: db.prepare('DELETE FROM session_log WHERE session_id = ? AND n <= ?'),
    dropLog: db.prepare('DELETE FROM session_log WHERE session_id = ?'),
    readLog: db.prepare('SELECT entry FROM session_log WHERE session_id = ? ORDER BY n'),
    remove: db.prepare('DELETE FROM sessions WHERE id = ?'),
    clearTimers: db.prepare('DELETE FROM timers WHERE session_id = ?'),
    putTimer: db.prepare(`INSERT INTO timers (session_id, kind, due, environment, conversation, payload) VALUES (?, ?, ?, ?, ?, ?)
      ON CONFLICT(session_id, kind) DO UPDATE SET due = excluded.due, environment = excluded.environment, conversation = excluded.conversation, payload = excluded.payload`),
    dueTimers: db.prepare('SELECT session_id, kind, due, environment, conversation, payload FROM timers WHERE due <= ? ORDER BY due LIMIT ?'),
    dropTimer: db.prepare('DELETE FROM timers WHERE session_id = ? AND kind = ?'),
    timerOf: db.prepare('SELECT due, environment, conversation, payload FROM timers WHERE session_id = ? AND kind = ?'),
    conversationsWithItems: db.prepare(
      'SELECT environment, conversation, MIN(seq) AS first FROM inbound GROUP BY environment, conversation ORDER BY first LIMIT ?',
    ),
    count: db.prepare(COUNT_SQL.count),
    countEnv: db.prepare(COUNT_SQL.countEnv),
    byNode: db.prepare(COUNT_SQL.byNode),
    byChannel: db.prepare(COUNT_SQL.byChannel),
    setAside: db.prepare('INSERT INTO set_aside (what, key, reason, content, at) VALUES (?, ?, ?, ?, ?)'),
    pruneSeen: db.prepare('DELETE FROM seen WHERE expires < ?'),
  };
}
