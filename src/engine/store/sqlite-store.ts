import { existsSync, renameSync } from 'node:fs';
import type { SessionRecord } from '../session';
import { readSessionRecord } from './record-check';
import { LocalLeases } from './local-leases';
import {
  LeaseLost, StoreUnavailable,
  type ConversationRef, type InboundItem, type Lease, type NewInboundItem, type SessionStore, type StepCommit,
} from './session-store';
import { SQLITE_CORRUPT, SQLITE_NOTADB, sqliteCode, type DatabaseConstructor, type DatabaseSync, type StatementSync } from './sqlite';

export interface SqliteStoreOptions {
  path: string;
  /** 'FULL' also survives a power loss, at the cost of a disk flush per step; 'NORMAL' survives a crash of the process. */
  synchronous: 'NORMAL' | 'FULL';
  /** Where the store says what it set aside or could not do. */
  log: { warn(line: string): void; error(line: string): void };
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS inbound (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  environment TEXT NOT NULL, conversation TEXT NOT NULL,
  kind TEXT NOT NULL, payload TEXT NOT NULL, at INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS inbound_conversation ON inbound(environment, conversation, seq);
CREATE TABLE IF NOT EXISTS sessions (
  id TEXT PRIMARY KEY,
  environment TEXT NOT NULL, conversation TEXT NOT NULL,
  waiting_node TEXT, activity INTEGER NOT NULL, record TEXT NOT NULL);
CREATE UNIQUE INDEX IF NOT EXISTS sessions_conversation ON sessions(environment, conversation);
CREATE INDEX IF NOT EXISTS sessions_waiting_node ON sessions(waiting_node);
CREATE INDEX IF NOT EXISTS sessions_activity ON sessions(activity);
CREATE TABLE IF NOT EXISTS timers (
  session_id TEXT NOT NULL, kind TEXT NOT NULL, due INTEGER NOT NULL,
  environment TEXT NOT NULL, conversation TEXT NOT NULL, payload TEXT NOT NULL,
  PRIMARY KEY (session_id, kind));
CREATE INDEX IF NOT EXISTS timers_due ON timers(due);
CREATE TABLE IF NOT EXISTS seen (key TEXT PRIMARY KEY, expires INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS seen_expires ON seen(expires);
CREATE TABLE IF NOT EXISTS set_aside (
  id INTEGER PRIMARY KEY AUTOINCREMENT, what TEXT NOT NULL, key TEXT NOT NULL,
  reason TEXT NOT NULL, content TEXT NOT NULL, at INTEGER NOT NULL);
`;

/**
 * The durable default: one SQLite database in WAL mode under the Node-RED user dir. Each step is
 * one transaction, so the cost of recording a change does not grow with the number of Sessions.
 * One process owns the file, so the conversation leases live in memory.
 */
export class SqliteStore implements SessionStore {
  readonly durable = true;
  readonly shared = false;
  readonly description: string;
  private readonly db: DatabaseSync;
  private readonly leases = new LocalLeases();
  private readonly sql: Record<string, StatementSync>;
  private lastPrune = 0;

  constructor(Database: DatabaseConstructor, private readonly options: SqliteStoreOptions) {
    this.description = `SQLite at ${options.path} (WAL, synchronous=${options.synchronous})`;
    this.db = openOrSetAside(Database, options);
    this.sql = {
      insertInbound: this.db.prepare('INSERT INTO inbound (environment, conversation, kind, payload, at) VALUES (?, ?, ?, ?, ?)'),
      seenGet: this.db.prepare('SELECT expires FROM seen WHERE key = ?'),
      seenPut: this.db.prepare('INSERT OR REPLACE INTO seen (key, expires) VALUES (?, ?)'),
      next: this.db.prepare('SELECT seq, kind, payload, at FROM inbound WHERE environment = ? AND conversation = ? ORDER BY seq LIMIT 1'),
      pending: this.db.prepare('SELECT 1 AS found FROM inbound WHERE seq = ?'),
      consume: this.db.prepare('DELETE FROM inbound WHERE seq = ?'),
      live: this.db.prepare('SELECT id, record FROM sessions WHERE environment = ? AND conversation = ?'),
      byId: this.db.prepare('SELECT id, record FROM sessions WHERE id = ?'),
      upsert: this.db.prepare(`INSERT INTO sessions (id, environment, conversation, waiting_node, activity, record) VALUES (?, ?, ?, ?, ?, ?)
        ON CONFLICT(id) DO UPDATE SET environment = excluded.environment, conversation = excluded.conversation, waiting_node = excluded.waiting_node, activity = excluded.activity, record = excluded.record`),
      dropConversation: this.db.prepare('DELETE FROM sessions WHERE environment = ? AND conversation = ? AND id <> ?'),
      remove: this.db.prepare('DELETE FROM sessions WHERE id = ?'),
      clearTimers: this.db.prepare('DELETE FROM timers WHERE session_id = ?'),
      putTimer: this.db.prepare('INSERT OR REPLACE INTO timers (session_id, kind, due, environment, conversation, payload) VALUES (?, ?, ?, ?, ?, ?)'),
      dueTimers: this.db.prepare('SELECT session_id, kind, due, environment, conversation, payload FROM timers WHERE due <= ? ORDER BY due LIMIT ?'),
      dropTimer: this.db.prepare('DELETE FROM timers WHERE session_id = ? AND kind = ?'),
      conversationsWithItems: this.db.prepare('SELECT environment, conversation, MIN(seq) AS first FROM inbound GROUP BY environment, conversation ORDER BY first LIMIT ?'),
      count: this.db.prepare('SELECT COUNT(*) AS n FROM sessions'),
      countEnv: this.db.prepare('SELECT COUNT(*) AS n FROM sessions WHERE environment = ?'),
      byNode: this.db.prepare('SELECT waiting_node AS node, COUNT(*) AS n FROM sessions WHERE waiting_node IS NOT NULL GROUP BY waiting_node'),
      setAside: this.db.prepare('INSERT INTO set_aside (what, key, reason, content, at) VALUES (?, ?, ?, ?, ?)'),
      pruneSeen: this.db.prepare('DELETE FROM seen WHERE expires < ?'),
    };
  }

  async record(item: NewInboundItem): Promise<{ seq: number } | 'duplicate'> {
    return this.write('record an inbound message', () => {
      const now = Date.now();
      if (item.dedupe) {
        const row = this.sql.seenGet.get(item.dedupe.key);
        if (row && Number(row.expires) >= now) return 'duplicate' as const;
        this.sql.seenPut.run(item.dedupe.key, now + item.dedupe.ttlMs);
      }
      const result = this.sql.insertInbound.run(item.environment, item.conversation, item.kind, JSON.stringify(item.payload ?? null), now);
      this.pruneNow(now);
      return { seq: Number(result.lastInsertRowid) };
    });
  }

  async next(ref: ConversationRef): Promise<InboundItem | undefined> {
    for (;;) {
      const row = this.read(() => this.sql.next.get(ref.environment, ref.conversation));
      if (!row) return undefined;
      try {
        return { ...ref, seq: Number(row.seq), kind: String(row.kind), payload: JSON.parse(String(row.payload)), at: Number(row.at) };
      } catch (err) {
        this.setAsideInbound(Number(row.seq), String(row.payload), `unreadable payload: ${(err as Error).message}`);
      }
    }
  }

  async pending(seq: number): Promise<boolean> {
    return Boolean(this.read(() => this.sql.pending.get(seq)));
  }

  async claim(ref: ConversationRef, owner: string): Promise<Lease | undefined> {
    return this.leases.claim(ref, owner);
  }

  async renew(lease: Lease): Promise<boolean> {
    return this.leases.holds(lease);
  }

  async release(lease: Lease): Promise<void> {
    this.leases.release(lease);
  }

  async liveSession(ref: ConversationRef): Promise<SessionRecord | undefined> {
    const row = this.read(() => this.sql.live.get(ref.environment, ref.conversation));
    return row ? this.sessionFrom(row) : undefined;
  }

  async sessionById(id: string): Promise<SessionRecord | undefined> {
    const row = this.read(() => this.sql.byId.get(id));
    return row ? this.sessionFrom(row) : undefined;
  }

  async commit(step: StepCommit): Promise<void> {
    if (!this.leases.holds(step.lease)) throw new LeaseLost(step.lease);
    this.write('save a Session step', () => {
      const { session } = step;
      if (step.consumed !== undefined) this.sql.consume.run(step.consumed);
      for (const mark of step.marks ?? []) this.sql.seenPut.run(mark.key, Date.now() + mark.ttlMs);
      if (!session) return;
      this.sql.clearTimers.run(session.id);
      if (session.state === 'waiting' || session.state === 'running') {
        // A Session that replaced an older one of the same conversation (the older ended in an earlier step).
        this.sql.dropConversation.run(session.environment, session.key, session.id);
        this.sql.upsert.run(session.id, session.environment, session.key, session.waitingAt?.nodeId ?? null, session.lastActivity, JSON.stringify(session));
        for (const timer of step.timers ?? []) {
          this.sql.putTimer.run(session.id, timer.kind, timer.due, session.environment, session.key, JSON.stringify(timer.payload ?? null));
        }
      } else {
        this.sql.remove.run(session.id);
      }
    });
  }

  async takeDueTimers(now: number, limit: number): Promise<ConversationRef[]> {
    return this.write('move due timers', () => {
      const rows = this.sql.dueTimers.all(now, limit);
      const refs: ConversationRef[] = [];
      for (const row of rows) {
        const ref = { environment: String(row.environment), conversation: String(row.conversation) };
        this.sql.dropTimer.run(row.session_id, row.kind);
        const payload = `{"sessionId":${JSON.stringify(String(row.session_id))},"due":${Number(row.due)},"wait":${String(row.payload)}}`;
        this.sql.insertInbound.run(ref.environment, ref.conversation, String(row.kind), payload, now);
        refs.push(ref);
      }
      return refs;
    });
  }

  async orphans(limit: number): Promise<ConversationRef[]> {
    const rows = this.read(() => this.sql.conversationsWithItems.all(limit));
    return rows
      .map((row) => ({ environment: String(row.environment), conversation: String(row.conversation) }))
      .filter((ref) => !this.leases.isHeld(ref));
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

  async seen(key: string, ttlMs: number): Promise<boolean> {
    return this.write('remember a handled message', () => {
      const now = Date.now();
      const row = this.sql.seenGet.get(key);
      if (row && Number(row.expires) >= now) return true;
      this.sql.seenPut.run(key, now + ttlMs);
      return false;
    });
  }

  async close(): Promise<void> {
    try {
      this.db.close();
    } catch {
      // already closed
    }
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
        this.sql.remove.run(id);
      });
      this.options.log.error(`[channel-sessions] Session ${id} in ${this.options.path} is malformed (${checked.problem}); set aside in its table set_aside, the conversation starts afresh`);
    } catch (err) {
      this.options.log.error(`[channel-sessions] Session ${id} is malformed (${checked.problem}) and could not be set aside: ${(err as Error).message}`);
    }
    return undefined;
  }

  private setAsideInbound(seq: number, content: string, reason: string): void {
    this.write('set aside an unreadable message', () => {
      this.sql.setAside.run('inbound', String(seq), reason, content, Date.now());
      this.sql.consume.run(seq);
    });
    this.options.log.error(`[channel-sessions] inbound item ${seq} in ${this.options.path} is unreadable (${reason}); set aside in its table set_aside`);
  }

  private pruneNow(now: number): void {
    if (now - this.lastPrune < 60_000) return;
    this.lastPrune = now;
    this.sql.pruneSeen.run(now);
  }

  private read<T>(work: () => T): T {
    try {
      return work();
    } catch (err) {
      throw new StoreUnavailable(`the Session store (${this.options.path}) could not be read: ${(err as Error).message}`, err);
    }
  }

  private write<T>(what: string, work: () => T): T {
    try {
      return this.transaction(work);
    } catch (err) {
      if (err instanceof StoreUnavailable) throw err;
      throw new StoreUnavailable(`the Session store (${this.options.path}) could not ${what}: ${(err as Error).message}`, err);
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

/**
 * Opens the database; a file that is not a database (or is corrupt) is renamed beside it, named in
 * the log, and a new one started, so Node-RED always starts.
 */
function openOrSetAside(Database: DatabaseConstructor, options: SqliteStoreOptions): DatabaseSync {
  try {
    return openDatabase(Database, options);
  } catch (err) {
    const code = sqliteCode(err);
    if (code !== SQLITE_CORRUPT && code !== SQLITE_NOTADB) throw err;
    const aside = `${options.path}.corrupt-${new Date().toISOString().replace(/[:.]/g, '-')}`;
    renameSync(options.path, aside);
    for (const suffix of ['-wal', '-shm']) {
      if (existsSync(options.path + suffix)) renameSync(options.path + suffix, aside + suffix);
    }
    options.log.error(`[channel-sessions] The Session store ${options.path} is not a readable database (${(err as Error).message}); it was moved to ${aside} for inspection and a new store started. Sessions in it are not restored.`);
    return openDatabase(Database, options);
  }
}

function openDatabase(Database: DatabaseConstructor, options: SqliteStoreOptions): DatabaseSync {
  const db = new Database(options.path, { timeout: 5000 });
  try {
    db.exec('PRAGMA journal_mode = WAL');
    db.exec(`PRAGMA synchronous = ${options.synchronous}`);
    db.exec(SCHEMA);
    return db;
  } catch (err) {
    db.close();
    throw err;
  }
}
