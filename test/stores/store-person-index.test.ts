import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import should from 'should';
import type { ChannelName } from '../../src/model/channels';
import type { SessionRecord } from '../../src/model/session';
import type { SessionStore } from '../../src/stores/session-store';
import type { DatabaseConstructor } from '../../src/stores/sqlite/sqlite';
import { commitStep, redisStoresInBlock, sessionRecord } from '../harness/store-records';
import { contextStoreOver } from '../harness/context-store';

// The built package, as Node-RED loads it.

const { SqliteStore } = require('../../../dist/stores/sqlite/sqlite-store.js');
// The stores' lines in English, as a store built without a runtime says them.
const say = require('../../../dist/model/texts.js').coreSay();

const { MemoryStore } = require('../../../dist/stores/memory/memory-store.js');

const { loadSqlite } = require('../../../dist/stores/sqlite/sqlite.js');

const ENV = 'envVoice';
const PERSON = '+15550001234';
const OURS = '+15550009999';
const T = 1_764_000_000_123;

function session(id: string, conversation: string, props: Partial<SessionRecord> = {}): SessionRecord {
  return sessionRecord({
    id,
    channel: 'TelcoVoice',
    environment: ENV,
    key: conversation,
    binding: { callSid: conversation, from: PERSON, to: OURS },
    person: PERSON,
    ...props,
  });
}

/** A voice Session waiting at a question, as 0.1.0 stored it: no format, the history inside, no `person` (the caller is `binding.from`). */
function oldVoiceRecord(id: string, callSid: string): Record<string, unknown> {
  return {
    id,
    channel: 'TelcoVoice' satisfies ChannelName,
    environment: ENV,
    process: 'tab1',
    key: callSid,
    isTest: false,
    vars: { execution: { channel: 'TelcoVoice', channelSender: PERSON, channelRecipient: OURS, sessionId: id } },
    binding: { callSid, from: PERSON, to: OURS },
    waitingAt: { nodeId: 'q1', nodeType: 'input-task', since: T },
    history: [],
    log: [],
    created: T,
    lastActivity: T,
    state: 'waiting',
  };
}

const ids = (sessions: SessionRecord[]) => sessions.map((s) => s.id).sort();

/**
 * The old voice Session 'old1' (written before the index) is found by its caller; a step of this
 * version keeps it found, and its end takes it out of the index.
 */
async function carriesOldSessionOn(store: SessionStore): Promise<void> {
  should(ids(await store.liveWith(ENV, PERSON))).eql(['old1']);
  const ref = { environment: ENV, conversation: 'CAold' };
  const live = (await store.liveSession(ref))!;
  const lease = (await store.claim(ref, 'me', 5000))!;
  await store.commit({ lease, session: { ...live, lastActivity: T + 1 } });
  should(ids(await store.liveWith(ENV, PERSON))).eql(['old1']);
  await store.commit({ lease, session: { ...live, state: 'completed' } });
  should(await store.liveWith(ENV, PERSON)).eql([]);
}

/**
 * The person index Call out's 4030 reads (`liveWith`): a Session committed with a person is found
 * by its Environment and person alone, and no more once it ended or was replaced.
 */
function findsByPerson(open: () => Promise<SessionStore>) {
  describe('a Session committed with a person', function () {
    let store: SessionStore;
    beforeEach(async function () {
      store = await open();
    });
    afterEach(async function () {
      await store.close();
    });

    const step = (s: SessionRecord, conversation = s.key) => commitStep(store, s, conversation);

    it("finds a person's live Sessions, and not once they ended or were replaced", async function () {
      await step(session('call1', 'CA1'));
      await step(session('other', 'CA2', { person: '+15550005678', binding: { from: '+15550005678' } }));
      await step(session('elsewhere', 'CA3', { environment: 'envOther' }));
      await step(session('sms', 'pair', { channel: 'TelcoMessagingSms', person: undefined, binding: { from: PERSON } }));
      should(ids(await store.liveWith(ENV, PERSON))).eql(['call1']);
      should((await store.liveWith(ENV, PERSON))[0]).containDeep({ id: 'call1', person: PERSON, binding: { callSid: 'CA1' } });
      should(ids(await store.liveWith('envOther', PERSON))).eql(['elsewhere']);
      should(await store.liveWith(ENV, '+15550000000')).eql([]);

      await step(session('call1', 'CA1', { waitingAt: { nodeId: 'next', nodeType: 'input-task', since: 2 } })); // a step on: found once
      await step(session('call2', 'CA4', { state: 'running', waitingAt: undefined })); // a second call of the same person
      should(ids(await store.liveWith(ENV, PERSON))).eql(['call1', 'call2']);

      await step({ ...session('call1', 'CA1'), state: 'completed' });
      await step(session('call3', 'CA4', { person: '+15550005678', binding: { from: '+15550005678' } })); // a newer Session of CA4's conversation replaces call2
      should(await store.liveWith(ENV, PERSON)).eql([]);
      should(ids(await store.liveWith(ENV, '+15550005678'))).eql(['call3', 'other']);
    });
  });
}

describe("the Session stores' person index", function () {
  this.timeout(30000);
  const log = { info: () => undefined, warn: () => undefined, error: () => undefined };

  describe('SQLite', function () {
    const Database = loadSqlite() as DatabaseConstructor;
    let dir: string;
    let path: string;
    beforeEach(function () {
      dir = mkdtempSync(join(tmpdir(), 'cs-person-'));
      path = join(dir, 'channel-sessions.db');
    });
    afterEach(function () {
      rmSync(dir, { recursive: true, force: true });
    });
    const open = async () => new SqliteStore(Database, { path, synchronous: 'NORMAL', log, say }) as SessionStore;
    findsByPerson(open);

    it('looks the person up by its index, not through the Sessions', async function () {
      await (await open()).close();
      const db = new Database(path);
      try {
        const plan = db
          .prepare('EXPLAIN QUERY PLAN SELECT id, record FROM sessions WHERE environment = ? AND person = ?')
          .all(ENV, PERSON)
          .map((row) => String(row.detail));
        should(plan.join('\n')).match(/USING INDEX sessions_person/);
      } finally {
        db.close();
      }
    });

    it("finds a voice Session of a database written before the index (0.1.0's sessions table), and carries it on", async function () {
      const db = new Database(path);
      db.exec(`
CREATE TABLE sessions (
  id TEXT PRIMARY KEY,
  environment TEXT NOT NULL, conversation TEXT NOT NULL,
  waiting_node TEXT, activity INTEGER NOT NULL, record TEXT NOT NULL);
CREATE UNIQUE INDEX sessions_conversation ON sessions(environment, conversation);
CREATE INDEX sessions_waiting_node ON sessions(waiting_node);
CREATE INDEX sessions_activity ON sessions(activity);
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);`);
      const insert = db.prepare('INSERT INTO sessions (id, environment, conversation, waiting_node, activity, record) VALUES (?, ?, ?, ?, ?, ?)');
      insert.run('old1', ENV, 'CAold', 'q1', T, JSON.stringify(oldVoiceRecord('old1', 'CAold')));
      // A messaging Session's `binding.from` is no voice caller: it is not indexed.
      insert.run('sms1', ENV, 'pair', 'q1', T, JSON.stringify({ ...oldVoiceRecord('sms1', 'pair'), channel: 'TelcoMessagingSms' }));
      db.close();
      const store: SessionStore = await open();
      try {
        await carriesOldSessionOn(store);
      } finally {
        await store.close();
      }
    });
  });

  describe('memory', function () {
    findsByPerson(async () => new MemoryStore('memory'));

    it('finds a voice Session restored from a context store, written before the index', async function () {
      const values = new Map<string, unknown>([['session_old1', oldVoiceRecord('old1', 'CAold')]]);
      const context = contextStoreOver(values);
      const store = new MemoryStore('memory, copied to context store "memory"', { context, storeName: 'memory', log, say });
      should(await store.restored).equal(1);
      should(ids(await store.liveWith(ENV, PERSON))).eql(['old1']);
    });
  });

  describe('Redis', function () {
    const { server, open, nextPrefix } = redisStoresInBlock('pi', log);
    findsByPerson(open);

    it('finds a voice Session written before the index (no person in its where), once indexed at open, and carries it on', async function () {
      const S = `${nextPrefix()}s:`;
      const cid = JSON.stringify([ENV, 'CAold']);
      // The keys 0.1.0's commit script wrote for a waiting voice Session.
      await server().command('HSET', `${S}sessions`, 'old1', JSON.stringify(oldVoiceRecord('old1', 'CAold')));
      await server().command('HSET', `${S}live`, cid, 'old1');
      await server().command('ZADD', `${S}activity`, String(T), 'old1');
      await server().command('ZADD', `${S}activity:${ENV}`, String(T), 'old1');
      await server().command('ZADD', `${S}at:q1`, String(T), 'old1');
      await server().command('SADD', `${S}nodes`, 'q1');
      await server().command('HSET', `${S}where`, 'old1', JSON.stringify({ env: ENV, cid, node: 'q1', timers: [] }));
      const store = await open();
      try {
        await carriesOldSessionOn(store);
        should(await server().command('EXISTS', `${S}with:${ENV}\n${PERSON}`)).equal(':0');
      } finally {
        await store.close();
      }
    });
  });
});
