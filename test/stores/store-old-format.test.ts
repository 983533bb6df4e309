import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import should from 'should';
import type { HistoryEntry, SessionLogEntry, SessionRecord } from '../../src/model/session';
import type { ConversationRef, SessionStore } from '../../src/stores/session-store';
import type { DatabaseConstructor } from '../../src/stores/sqlite/sqlite';
import { RedisServer } from '../harness/redis';
import { contextStoreOver } from '../harness/context-store';

// The built package, as Node-RED loads it.

const { SqliteStore } = require('../../../dist/stores/sqlite/sqlite-store.js');

const { MemoryStore } = require('../../../dist/stores/memory/memory-store.js');

const { loadSqlite } = require('../../../dist/stores/sqlite/sqlite.js');

// The stores' lines in English, as a store built without a runtime says them.
const say = require('../../../dist/model/texts.js').coreSay();

const { SESSION_FORMAT } = require('../../../dist/model/session.js');

const redisContext = require('../../../redis-context.js');

/**
 * Stores written before records carried a format (package 0.1.0 as of 0cda81c): a Session record
 * with its history and log inside and no `v`, inbound items with no format. Each is written here
 * exactly as that version wrote it (its SQL schema, its Redis keys, its context value), and a store
 * of this version must find the Sessions, their history and the items still to be handled.
 */
const ENV = 'envOld';
const USER = '+15550001111';
const OURS = '+15550009999';
const CONVERSATION = `${USER}>${OURS}`;
const T = 1_764_000_000_123;

const HISTORY: HistoryEntry[] = [
  { at: T, from: 'user', text: 'hi' },
  { at: T + 10, from: 'bot', text: 'Q1?', kind: 'prompt' },
  { at: T + 2000, from: 'user', text: 'Ann' },
  { at: T + 2010, from: 'bot', text: 'Q2?', kind: 'prompt' },
];

/** A messaging Session waiting at its second question, as 0.1.0 stored it (field order included). */
function oldRecord(id: string, key = CONVERSATION): Record<string, unknown> {
  return {
    id,
    channel: 'TelcoMessagingSms',
    environment: ENV,
    process: 'tab1',
    key,
    isTest: false,
    vars: { execution: { channel: 'TelcoMessagingSms', channelSender: USER, channelRecipient: OURS, sessionId: id }, name: 'Ann' },
    binding: { user: USER, ours: OURS },
    waitingAt: { nodeId: 'q2', nodeType: 'input-task', since: T + 2010 },
    history: HISTORY,
    log: [{ at: T + 5, level: 'warn', code: 4022, message: '1 file(s) not kept' }],
    created: T,
    lastActivity: T + 2010,
    state: 'waiting',
  };
}

/** A received SMS as 0.1.0's messaging route recorded it (not yet handled when the old version stopped). */
const OLD_ITEM_PAYLOAD = { from: USER, to: OURS, body: 'Paris', sid: 'SM0001', files: [] };

/** The history as the Sessions view shows it: what the store keeps apart, then lines not yet moved there. */
async function historyOf(store: SessionStore, session: SessionRecord): Promise<HistoryEntry[]> {
  return [...(await store.history(session.id)), ...(session.newHistory ?? [])];
}

/** The log as the Sessions view shows it, the same way. */
async function logOf(store: SessionStore, session: SessionRecord): Promise<SessionLogEntry[]> {
  return [...(await store.sessionLog(session.id)), ...(session.newLog ?? [])];
}

/** What every store must show of the old data, then one step on it with this version. */
async function findsAndContinues(store: SessionStore, expectItems: number): Promise<void> {
  const ref: ConversationRef = { environment: ENV, conversation: CONVERSATION };
  const live = await store.liveSession(ref);
  should(live).not.be.undefined();
  should(live!.id).equal('old1');
  should(live!.v).equal(SESSION_FORMAT, 'read as the current format');
  should(live!.vars.name).equal('Ann');
  should(live!.waitingAt?.nodeId).equal('q2');
  should(await historyOf(store, live!)).eql(HISTORY);
  should((await logOf(store, live!)).map((l) => l.code)).eql([4022]);
  should((await store.list({ limit: 10 })).map((s) => s.id)).containEql('old1');
  should(await store.waitingByNode()).eql(new Map([['q2', 1]]));
  should(await store.countByChannel()).eql([OLD_COUNT]);
  if (!expectItems) return;
  const item = await store.next(ref);
  should(item?.kind).equal('messaging');
  should(item?.payload).eql(OLD_ITEM_PAYLOAD);
  // A step of this version on the old Session: it is written back in the current format.
  const lease = (await store.claim(ref, 'me', 5000))!;
  live!.vars.city = 'Paris';
  live!.lastActivity = T + 5000;
  await store.commit({ lease, consumed: item!.seq, session: live, timers: [{ kind: 'expire', due: T + 86_405_000, payload: { lastActivity: T + 5000 } }] });
  await store.release(lease);
  should(await store.next(ref)).be.undefined();
  const after = (await store.sessionById('old1'))!;
  should(after.vars).containEql({ name: 'Ann', city: 'Paris' });
  // The step moved the old history out of the record, into the history kept apart.
  should(after.newHistory).be.undefined();
  should(after.historyLines).equal(HISTORY.length);
  should(await store.history('old1')).eql(HISTORY);
  // and the old log out of the record, into the log kept apart.
  should(after).not.have.property('log');
  should(after.newLog).be.undefined();
  should(after.logLines).equal(1);
  should((await store.sessionLog('old1')).map((l) => l.code)).eql([4022]);
  should(await store.countByChannel()).eql([OLD_COUNT], 'the step left it where it was counted');
}

/** The old Session as the metrics count it: live and waiting, on its Channel. */
const OLD_COUNT = { environment: ENV, channel: 'TelcoMessagingSms', live: 1, waiting: 1 };

/**
 * Two Sessions as the version before the counts per Channel (main as of b436c87) wrote them, in the
 * current format: an SMS Session waiting at q2 and a WhatsApp one running (a step in progress when
 * it stopped), each with a history line kept apart.
 */
function mainRecord(id: string, channel: string, key: string, waiting: boolean): Record<string, unknown> {
  const { history: _history, ...old } = oldRecord(id, key);
  return {
    v: 2,
    ...old,
    channel,
    vars: { execution: { channel, channelSender: USER, channelRecipient: OURS, sessionId: id } },
    historyLines: 1,
    ...(waiting ? {} : { waitingAt: undefined, state: 'running' }),
  };
}
const MAIN_SESSIONS = [
  { id: 'sms1', channel: 'TelcoMessagingSms', key: CONVERSATION, node: 'q2' },
  { id: 'wa1', channel: 'TelcoMessagingMessenger', key: `whatsapp:${USER}>whatsapp:${OURS}`, node: null },
];
const MAIN_COUNTS = [
  { environment: ENV, channel: 'TelcoMessagingMessenger', live: 1, waiting: 0 },
  { environment: ENV, channel: 'TelcoMessagingSms', live: 1, waiting: 1 },
];

/** The counts in a set order, to compare. */
async function countsOf(store: SessionStore): Promise<unknown[]> {
  return (await store.countByChannel()).sort((a, b) => a.channel.localeCompare(b.channel));
}

/** What a store must say of the Sessions the version before the counts per Channel wrote: both counted, and an ended one taken out. */
async function countsMainSessions(store: SessionStore): Promise<void> {
  should(await countsOf(store)).eql(MAIN_COUNTS);
  const ref = { environment: ENV, conversation: CONVERSATION };
  const live = (await store.liveSession(ref))!;
  const lease = (await store.claim(ref, 'me', 5000))!;
  await store.commit({ lease, session: { ...live, state: 'completed' } });
  await store.release(lease);
  should(await store.countByChannel()).eql([MAIN_COUNTS[0]]);
}

describe('a Session store written by the format before versions (0.1.0)', function () {
  this.timeout(30000);
  const log = {
    lines: [] as string[],
    info: (l: string) => log.lines.push(l),
    warn: (l: string) => log.lines.push(l),
    error: (l: string) => log.lines.push(l),
  };

  describe('SQLite', function () {
    const Database = loadSqlite() as DatabaseConstructor;
    let dir: string;
    let path: string;
    let store: SessionStore | undefined;

    beforeEach(function () {
      dir = mkdtempSync(join(tmpdir(), 'cs-old-format-'));
      path = join(dir, 'channel-sessions.db');
    });
    afterEach(async function () {
      await store?.close();
      store = undefined;
      rmSync(dir, { recursive: true, force: true });
    });

    /** The tables 0.1.0 made, and its rows: a waiting Session, its expiry timer, a received message. */
    function writeOldDatabase(): void {
      const db = new Database(path);
      db.exec(`
CREATE TABLE inbound (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  environment TEXT NOT NULL, conversation TEXT NOT NULL,
  kind TEXT NOT NULL, payload TEXT NOT NULL, at INTEGER NOT NULL);
CREATE INDEX inbound_conversation ON inbound(environment, conversation, seq);
CREATE TABLE sessions (
  id TEXT PRIMARY KEY,
  environment TEXT NOT NULL, conversation TEXT NOT NULL,
  waiting_node TEXT, activity INTEGER NOT NULL, record TEXT NOT NULL);
CREATE UNIQUE INDEX sessions_conversation ON sessions(environment, conversation);
CREATE INDEX sessions_waiting_node ON sessions(waiting_node);
CREATE INDEX sessions_activity ON sessions(activity);
CREATE TABLE timers (
  session_id TEXT NOT NULL, kind TEXT NOT NULL, due INTEGER NOT NULL,
  environment TEXT NOT NULL, conversation TEXT NOT NULL, payload TEXT NOT NULL,
  PRIMARY KEY (session_id, kind));
CREATE INDEX timers_due ON timers(due);
CREATE TABLE seen (key TEXT PRIMARY KEY, expires INTEGER NOT NULL);
CREATE INDEX seen_expires ON seen(expires);
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE set_aside (
  id INTEGER PRIMARY KEY AUTOINCREMENT, what TEXT NOT NULL, key TEXT NOT NULL,
  reason TEXT NOT NULL, content TEXT NOT NULL, at INTEGER NOT NULL);
CREATE TABLE context (
  scope TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL,
  PRIMARY KEY (scope, key));`);
      db.prepare('INSERT INTO sessions (id, environment, conversation, waiting_node, activity, record) VALUES (?, ?, ?, ?, ?, ?)').run(
        'old1',
        ENV,
        CONVERSATION,
        'q2',
        T + 2010,
        JSON.stringify(oldRecord('old1')),
      );
      db.prepare('INSERT INTO timers (session_id, kind, due, environment, conversation, payload) VALUES (?, ?, ?, ?, ?, ?)').run(
        'old1',
        'expire',
        T + 2010 + 86_400_000,
        ENV,
        CONVERSATION,
        JSON.stringify({ lastActivity: T + 2010 }),
      );
      db.prepare('INSERT INTO inbound (environment, conversation, kind, payload, at) VALUES (?, ?, ?, ?, ?)').run(
        ENV,
        CONVERSATION,
        'messaging',
        JSON.stringify(OLD_ITEM_PAYLOAD),
        T + 3000,
      );
      db.close();
    }

    it('finds its Sessions, their history and the messages not yet handled, and carries them on', async function () {
      writeOldDatabase();
      store = new SqliteStore(Database, { path, synchronous: 'NORMAL', log, say });
      await findsAndContinues(store!, 1);
      await store!.close();
      // Opened again, as after a restart: the upgraded Session reads the same.
      store = new SqliteStore(Database, { path, synchronous: 'NORMAL', log, say });
      should(await historyOf(store!, (await store!.sessionById('old1'))!)).eql(HISTORY);
      should(await store!.takeDueTimers(T + 86_405_000, 10)).eql([{ environment: ENV, conversation: CONVERSATION }]);
      should((await store!.next({ environment: ENV, conversation: CONVERSATION }))?.kind).equal('expire');
    });

    it('journals the effects of its steps (the table made at open), its waiting message counting as begun by the process before', async function () {
      writeOldDatabase();
      store = new SqliteStore(Database, { path, synchronous: 'NORMAL', log, say });
      const ref = { environment: ENV, conversation: CONVERSATION };
      const { lease, item } = (await store!.claimNext!(ref, 'me', 30_000))!;
      should(item!.again).eql({ since: T + 3000 });
      (await store!.effectsOf(ref, item!.seq)).size.should.equal(0);
      await store!.recordEffect(lease, ref, item!.seq, `old1:${item!.seq}:1`, { k: 'twilio.message', v: { sid: 'SM1' } });
      [...(await store!.effectsOf(ref, item!.seq)).values()].should.eql([{ k: 'twilio.message', v: { sid: 'SM1' } }]);
      await store!.commit({ lease, consumed: item!.seq });
      (await store!.effectsOf(ref, item!.seq)).size.should.equal(0);
    });

    it('counts per Channel the Sessions of a database written before those counts (no channel column)', async function () {
      const db = new Database(path);
      // The tables as main wrote them before the counts per Channel: its schema, its counts by node and their marker.
      db.exec(`
CREATE TABLE inbound (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  environment TEXT NOT NULL, conversation TEXT NOT NULL,
  kind TEXT NOT NULL, payload TEXT NOT NULL, at INTEGER NOT NULL, v INTEGER NOT NULL DEFAULT 1);
CREATE INDEX inbound_conversation ON inbound(environment, conversation, seq);
CREATE TABLE sessions (
  id TEXT PRIMARY KEY,
  environment TEXT NOT NULL, conversation TEXT NOT NULL,
  waiting_node TEXT, activity INTEGER NOT NULL, record TEXT NOT NULL);
CREATE UNIQUE INDEX sessions_conversation ON sessions(environment, conversation);
CREATE INDEX sessions_waiting_node ON sessions(waiting_node);
CREATE INDEX sessions_activity ON sessions(activity);
CREATE TABLE history (
  session_id TEXT NOT NULL, n INTEGER NOT NULL, line TEXT NOT NULL,
  PRIMARY KEY (session_id, n)) WITHOUT ROWID;
CREATE TABLE timers (
  session_id TEXT NOT NULL, kind TEXT NOT NULL, due INTEGER NOT NULL,
  environment TEXT NOT NULL, conversation TEXT NOT NULL, payload TEXT NOT NULL,
  PRIMARY KEY (session_id, kind));
CREATE INDEX timers_due ON timers(due);
CREATE TABLE seen (key TEXT PRIMARY KEY, expires INTEGER NOT NULL);
CREATE TABLE pace (key TEXT PRIMARY KEY, next INTEGER NOT NULL);
CREATE INDEX seen_expires ON seen(expires);
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE set_aside (
  id INTEGER PRIMARY KEY AUTOINCREMENT, what TEXT NOT NULL, key TEXT NOT NULL,
  reason TEXT NOT NULL, content TEXT NOT NULL, at INTEGER NOT NULL);
CREATE TABLE context (
  scope TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL,
  PRIMARY KEY (scope, key));
CREATE TABLE session_counts (
  environment TEXT NOT NULL, waiting_node TEXT NOT NULL, n INTEGER NOT NULL,
  PRIMARY KEY (environment, waiting_node)) WITHOUT ROWID;
CREATE TRIGGER session_counts_insert AFTER INSERT ON sessions BEGIN
  INSERT INTO session_counts (environment, waiting_node, n) VALUES (NEW.environment, COALESCE(NEW.waiting_node, ''), 1)
    ON CONFLICT (environment, waiting_node) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER session_counts_delete AFTER DELETE ON sessions BEGIN
  UPDATE session_counts SET n = n - 1 WHERE environment = OLD.environment AND waiting_node = COALESCE(OLD.waiting_node, '');
END;
CREATE TRIGGER session_counts_update AFTER UPDATE OF environment, waiting_node ON sessions
WHEN OLD.environment IS NOT NEW.environment OR OLD.waiting_node IS NOT NEW.waiting_node BEGIN
  UPDATE session_counts SET n = n - 1 WHERE environment = OLD.environment AND waiting_node = COALESCE(OLD.waiting_node, '');
  INSERT INTO session_counts (environment, waiting_node, n) VALUES (NEW.environment, COALESCE(NEW.waiting_node, ''), 1)
    ON CONFLICT (environment, waiting_node) DO UPDATE SET n = n + 1;
END;
INSERT INTO meta (key, value) VALUES ('session_counts', '2026-01-01T00:00:00.000Z');`);
      for (const { id, channel, key, node } of MAIN_SESSIONS) {
        db.prepare('INSERT INTO sessions (id, environment, conversation, waiting_node, activity, record) VALUES (?, ?, ?, ?, ?, ?)').run(
          id,
          ENV,
          key,
          node,
          T + 2010,
          JSON.stringify(mainRecord(id, channel, key, node !== null)),
        );
        db.prepare('INSERT INTO history (session_id, n, line) VALUES (?, 1, ?)').run(id, JSON.stringify(HISTORY[0]));
      }
      db.close();
      store = new SqliteStore(Database, { path, synchronous: 'NORMAL', log });
      await countsMainSessions(store!);
      await store!.close();
      // Opened again: counted once, kept since.
      store = new SqliteStore(Database, { path, synchronous: 'NORMAL', log });
      should(await store!.countByChannel()).eql([MAIN_COUNTS[0]]);
    });

    it('sets aside a record or an item of a format newer than it reads, and names it', async function () {
      writeOldDatabase();
      const db = new Database(path);
      const newer = { ...oldRecord('new1', 'other'), v: SESSION_FORMAT + 1 };
      db.prepare('INSERT INTO sessions (id, environment, conversation, waiting_node, activity, record) VALUES (?, ?, ?, ?, ?, ?)').run(
        'new1',
        ENV,
        'other',
        'q2',
        T,
        JSON.stringify(newer),
      );
      db.close();
      store = new SqliteStore(Database, { path, synchronous: 'NORMAL', log, say });
      should(await store!.sessionById('new1')).be.undefined();
      should(log.lines.some((l) => l.includes('Session new1') && l.includes(`format ${SESSION_FORMAT + 1}`))).be.true();
      await store!.record({ environment: ENV, conversation: 'other', kind: 'messaging', payload: {} });
      await store!.close();
      const raw = new Database(path);
      raw.prepare("UPDATE inbound SET v = 99 WHERE conversation = 'other'").run();
      raw.close();
      store = new SqliteStore(Database, { path, synchronous: 'NORMAL', log, say });
      should(await store!.next({ environment: ENV, conversation: 'other' })).be.undefined();
      should(log.lines.some((l) => l.includes('format 99'))).be.true();
    });
  });

  describe('Redis', function () {
    let redis: RedisServer;
    let store: SessionStore | undefined;
    before(async function () {
      redis = await RedisServer.start();
    });
    after(async function () {
      await redis?.close();
    });
    afterEach(async function () {
      await store?.close();
      store = undefined;
    });

    it('finds its Sessions, their history and the messages not yet handled, and carries them on', async function () {
      const S = 'old:s:';
      const cid = JSON.stringify([ENV, CONVERSATION]);
      // The keys 0.1.0 wrote for a waiting Session (its commit script) and a recorded message (its record script).
      await redis.command('HSET', `${S}sessions`, 'old1', JSON.stringify(oldRecord('old1')));
      await redis.command('HSET', `${S}live`, cid, 'old1');
      await redis.command('ZADD', `${S}activity`, String(T + 2010), 'old1');
      await redis.command('ZADD', `${S}activity:${ENV}`, String(T + 2010), 'old1');
      await redis.command('ZADD', `${S}at:q2`, String(T + 2010), 'old1');
      await redis.command('SADD', `${S}nodes`, 'q2');
      await redis.command('HSET', `${S}where`, 'old1', JSON.stringify({ env: ENV, cid, node: 'q2', timers: [] }));
      const item = { environment: ENV, conversation: CONVERSATION, kind: 'messaging', payload: OLD_ITEM_PAYLOAD, at: T + 3000 };
      await redis.command('SET', `${S}seq`, '7');
      await redis.command('HSET', `${S}items`, '7', JSON.stringify(item));
      await redis.command('RPUSH', `${S}q:${cid}`, '7');
      await redis.command('ZADD', `${S}active`, '7', cid);
      store = redisContext.sessionStoreFor({ url: redis.url, prefix: 'old:' }, log) as SessionStore;
      await (store as unknown as { whenConnected(ms: number): Promise<boolean> }).whenConnected(5000);
      await findsAndContinues(store, 1);
    });

    it('counts per Channel the Sessions written before those counts, once, at open', async function () {
      const S = 'main:s:';
      // The keys main's commit script wrote before the counts per Channel: `where` without the Channel, no counts, no marker.
      for (const { id, channel, key, node } of MAIN_SESSIONS) {
        const cid = JSON.stringify([ENV, key]);
        await redis.command('HSET', `${S}sessions`, id, JSON.stringify(mainRecord(id, channel, key, node !== null)));
        await redis.command('HSET', `${S}live`, cid, id);
        await redis.command('ZADD', `${S}activity`, String(T + 2010), id);
        await redis.command('ZADD', `${S}activity:${ENV}`, String(T + 2010), id);
        if (node) {
          await redis.command('ZADD', `${S}at:${node}`, String(T + 2010), id);
          await redis.command('SADD', `${S}nodes`, node);
        }
        await redis.command('HSET', `${S}where`, id, JSON.stringify({ env: ENV, cid, node: node ?? '', timers: [], hn: 1 }));
        await redis.command('RPUSH', `${S}h:${id}`, JSON.stringify(HISTORY[0]));
      }
      store = redisContext.sessionStoreFor({ url: redis.url, prefix: 'main:' }, log) as SessionStore;
      await (store as unknown as { whenConnected(ms: number): Promise<boolean> }).whenConnected(5000);
      await countsMainSessions(store);
      should(await redis.command('GET', `${S}indexed`)).equal('$1\n2');
      await store.close();
      // Opened again: counted once (the marker), kept by the commits since.
      store = redisContext.sessionStoreFor({ url: redis.url, prefix: 'main:' }, log) as SessionStore;
      await (store as unknown as { whenConnected(ms: number): Promise<boolean> }).whenConnected(5000);
      should(await store.countByChannel()).eql([MAIN_COUNTS[0]]);
    });
  });

  describe('memory, copied to a context store', function () {
    it('restores its waiting Sessions with their history', async function () {
      // A Node-RED context store as the mirror sees it, holding what 0.1.0 copied there.
      const values = new Map<string, unknown>([['session_old1', oldRecord('old1')]]);
      const context = contextStoreOver(values);
      const store = new MemoryStore('memory, copied to context store "memory"', { context, storeName: 'memory', log, say });
      should(await store.restored).equal(1);
      await findsAndContinues(store, 0);
      // A step of this version, copied to the context store, is restored by the next start.
      const ref = { environment: ENV, conversation: CONVERSATION };
      const lease = (await store.claim(ref, 'me', 5000))!;
      const live = (await store.liveSession(ref))!;
      live.vars.city = 'Paris';
      await store.commit({ lease, session: live });
      const again = new MemoryStore('again', { context, storeName: 'memory', log, say });
      should(await again.restored).equal(1);
      const restored = (await again.sessionById('old1'))!;
      should(restored.vars.city).equal('Paris');
      should(await historyOf(again, restored)).eql(HISTORY);
    });
  });
});

/**
 * Stores written by format 2 (main as of baddf36): the history kept apart, the log still inside the
 * record. A store of this version finds the log, and a step moves it out of the record.
 */
describe('a Session store written by format 2 (the log inside the record)', function () {
  this.timeout(30000);
  const log = { info: () => undefined, warn: () => undefined, error: () => undefined };
  const ref = { environment: ENV, conversation: CONVERSATION };
  const FORMAT_2 = mainRecord('f2', 'TelcoMessagingSms', CONVERSATION, true);

  /** The Session, its history and log as the Sessions view shows them, then a step of this version. */
  async function findsLogAndMovesIt(store: SessionStore): Promise<void> {
    const live = (await store.liveSession(ref))!;
    should(live.v).equal(SESSION_FORMAT);
    should(live).not.have.property('log');
    should(await historyOf(store, live)).eql([HISTORY[0]]);
    should((await logOf(store, live)).map((l) => l.code)).eql([4022]);
    const lease = (await store.claim(ref, 'me', 5000))!;
    live.vars.city = 'Paris';
    await store.commit({ lease, session: live });
    await store.release(lease);
    const after = (await store.sessionById('f2'))!;
    should(after).not.have.property('log');
    should(after.newLog).be.undefined();
    should(after.logLines).equal(1);
    should((await store.sessionLog('f2')).map((l) => l.code)).eql([4022]);
    should(await store.history('f2')).eql([HISTORY[0]]);
  }

  it('SQLite', async function () {
    const Database = loadSqlite() as DatabaseConstructor;
    const dir = mkdtempSync(join(tmpdir(), 'cs-format-2-'));
    const path = join(dir, 'channel-sessions.db');
    try {
      // The tables as this version makes them, less the one format 2 did not have; then its rows.
      const making = new SqliteStore(Database, { path, synchronous: 'NORMAL', log, say }) as SessionStore;
      await making.count({});
      await making.close();
      const db = new Database(path);
      db.exec('DROP TABLE session_log');
      db.prepare('INSERT INTO sessions (id, environment, conversation, waiting_node, activity, record, channel) VALUES (?, ?, ?, ?, ?, ?, ?)').run(
        'f2',
        ENV,
        CONVERSATION,
        'q2',
        T + 2010,
        JSON.stringify(FORMAT_2),
        'TelcoMessagingSms',
      );
      db.prepare('INSERT INTO history (session_id, n, line) VALUES (?, 1, ?)').run('f2', JSON.stringify(HISTORY[0]));
      db.close();
      let store = new SqliteStore(Database, { path, synchronous: 'NORMAL', log, say }) as SessionStore;
      await findsLogAndMovesIt(store);
      await store.close();
      // Opened again, as after a restart: the log is where the step put it.
      store = new SqliteStore(Database, { path, synchronous: 'NORMAL', log, say }) as SessionStore;
      should((await logOf(store, (await store.sessionById('f2'))!)).map((l) => l.code)).eql([4022]);
      await store.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('Redis', async function () {
    const redis = await RedisServer.start();
    try {
      const S = 'f2:s:';
      const cid = JSON.stringify([ENV, CONVERSATION]);
      // The keys format 2's commit script wrote for a waiting Session.
      await redis.command('HSET', `${S}sessions`, 'f2', JSON.stringify(FORMAT_2));
      await redis.command('HSET', `${S}live`, cid, 'f2');
      await redis.command('ZADD', `${S}activity`, String(T + 2010), 'f2');
      await redis.command('ZADD', `${S}activity:${ENV}`, String(T + 2010), 'f2');
      await redis.command('ZADD', `${S}at:q2`, String(T + 2010), 'f2');
      await redis.command('SADD', `${S}nodes`, 'q2');
      await redis.command('HSET', `${S}where`, 'f2', JSON.stringify({ env: ENV, ch: 'TelcoMessagingSms', person: '', cid, node: 'q2', timers: [], hn: 1 }));
      await redis.command('RPUSH', `${S}h:f2`, JSON.stringify(HISTORY[0]));
      const store = redisContext.sessionStoreFor({ url: redis.url, prefix: 'f2:' }, log) as SessionStore;
      await (store as unknown as { whenConnected(ms: number): Promise<boolean> }).whenConnected(5000);
      await findsLogAndMovesIt(store);
      await store.close();
    } finally {
      await redis.close();
    }
  });

  it('memory, copied to a context store', async function () {
    const values = new Map<string, unknown>([
      ['session_f2', FORMAT_2],
      ['history_f2', [HISTORY[0]]],
    ]);
    const context = contextStoreOver(values);
    const store = new MemoryStore('memory', { context, storeName: 'memory', log, say }) as SessionStore;
    should(await (store as unknown as { restored: Promise<number> }).restored).equal(1);
    await findsLogAndMovesIt(store);
    // The context store now holds the log beside the record, and the next start restores it.
    should(values.get('session_f2')).not.have.property('log');
    const again = new MemoryStore('again', { context, storeName: 'memory', log, say }) as SessionStore;
    await (again as unknown as { restored: Promise<number> }).restored;
    should((await logOf(again, (await again.sessionById('f2'))!)).map((l) => l.code)).eql([4022]);
  });
});
