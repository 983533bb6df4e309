import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import should from 'should';
import type { HistoryEntry, SessionLogEntry, SessionRecord } from '../../src/model/session';
import type { SessionStore, StepCommit } from '../../src/stores/session-store';
import type { DatabaseConstructor } from '../../src/stores/sqlite/sqlite';
import { RedisServer } from '../harness/redis';
import { sessionRecord } from '../harness/store-records';

// The built package, as Node-RED loads it.

const { SqliteStore } = require('../../../dist/stores/sqlite/sqlite-store.js');

const { MemoryStore } = require('../../../dist/stores/memory/memory-store.js');

const { loadSqlite } = require('../../../dist/stores/sqlite/sqlite.js');

// The stores' lines in English, as a store built without a runtime says them.
const inEnglish = require('../../../dist/model/texts.js').coreSay();

const { HISTORY_LIMIT, LOG_LIMIT } = require('../../../dist/model/session.js');

const redisContext = require('../../../redis-context.js');

const ENV = 'env1';
const conv = (conversation: string) => ({ environment: ENV, conversation });

function session(id: string, conversation: string): SessionRecord {
  return sessionRecord({ id, environment: ENV, key: conversation, lastActivity: 1 });
}

/** Adds lines to a Session as the engine's addHistory does. */
function say(s: SessionRecord, ...texts: string[]): void {
  for (const text of texts) {
    (s.newHistory ??= []).push({ at: s.historyLines, from: 'user', text });
    s.historyLines++;
  }
}

const texts = (lines: HistoryEntry[]) => lines.map((l) => l.text);

/** Adds log entries to a Session as the engine's addLog does (a message's status, say). */
function note(s: SessionRecord, ...messages: string[]): void {
  for (const message of messages) {
    (s.newLog ??= []).push({ at: s.logLines, level: 'info', message });
    s.logLines++;
  }
}

const messages = (entries: SessionLogEntry[]) => entries.map((l) => l.message);

interface Kind {
  name: string;
  open(): Promise<SessionStore>;
  /** The stored record of a Session as text, as the store keeps it. */
  rawRecord(store: SessionStore, id: string): Promise<string | undefined>;
  close(store: SessionStore): Promise<void>;
}

const Database = loadSqlite() as DatabaseConstructor;
const log = { info: () => undefined, warn: () => undefined, error: () => undefined };
let redis: RedisServer | undefined;
let dir = '';
let prefix = 0;
const contexts = new Map<SessionStore, Map<string, unknown>>();

const kinds: Kind[] = [
  {
    name: 'SQLite',
    async open() {
      return new SqliteStore(Database, { path: join(dir, `s${++prefix}.db`), synchronous: 'NORMAL', log, say: inEnglish });
    },
    async rawRecord(store, id) {
      const path = (store as unknown as { options: { path: string } }).options.path;
      const db = new Database(path);
      const row = db.prepare('SELECT record FROM sessions WHERE id = ?').get(id);
      db.close();
      return row ? String(row.record) : undefined;
    },
    close: (store) => store.close(),
  },
  {
    name: 'memory, copied to a context store',
    async open() {
      const values = new Map<string, unknown>();
      const context = {
        get: (key: string, _s: string | undefined, cb: (err: Error | null, value: unknown) => void) => cb(null, values.get(key)),
        set: (key: string, value: unknown, _s: string | undefined, cb: (err: Error | null) => void) => {
          if (value === undefined) values.delete(key);
          else values.set(key, value);
          cb(null);
        },
        keys: (_s: string | undefined, cb: (err: Error | null, keys: string[]) => void) => cb(null, [...values.keys()]),
      };
      const store = new MemoryStore('memory', { context, storeName: 'memory', log, say: inEnglish }) as SessionStore;
      contexts.set(store, values);
      return store;
    },
    async rawRecord(store, id) {
      const value = contexts.get(store)!.get(`session_${id}`);
      return value === undefined ? undefined : JSON.stringify(value);
    },
    close: (store) => store.close(),
  },
  {
    name: 'Redis',
    async open() {
      redis ??= await RedisServer.start();
      const store = redisContext.sessionStoreFor({ url: redis.url, prefix: `h${++prefix}:` }, log);
      await store.whenConnected(5000);
      return store as SessionStore;
    },
    async rawRecord(_store, id) {
      const raw = await redis!.command('HGET', `h${prefix}:s:sessions`, id);
      return raw || undefined;
    },
    close: (store) => store.close(),
  },
];

/**
 * A Session's history is kept apart from its record: a step appends its lines and never reads or
 * rewrites the others, so the record a step reads and writes stays the same size however long the
 * conversation; what shows the history reads it whole.
 */
describe("a Session's history, kept apart from its record", function () {
  this.timeout(30000);
  before(function () {
    dir = mkdtempSync(join(tmpdir(), 'cs-history-'));
  });
  after(async function () {
    await redis?.close();
    redis = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  for (const kind of kinds) {
    describe(kind.name, function () {
      let store: SessionStore;
      beforeEach(async function () {
        store = await kind.open();
      });
      afterEach(async function () {
        await kind.close(store);
      });

      async function step(s: SessionRecord, extra: Partial<StepCommit> = {}): Promise<void> {
        const lease = (await store.claim(conv(s.key), 'me', 5000))!;
        await store.commit({ lease, session: s, ...extra });
        await store.release(lease);
        s.newHistory = undefined;
      }

      it('appends each step’s lines; the record the next step reads carries none of them and does not grow', async function () {
        const s = session('s1', 'c1');
        say(s, 'hi', 'Q1?');
        await step(s);
        const small = (await kind.rawRecord(store, 's1'))!;
        for (let i = 0; i < 40; i++) {
          const live = (await store.liveSession(conv('c1')))!;
          should(live.newHistory).be.undefined();
          say(live, `a${i}`, `q${i}`);
          await step(live);
        }
        const record = (await kind.rawRecord(store, 's1'))!;
        record.should.not.containEql('a39');
        should(record.length).be.belowOrEqual(small.length + 2, 'the record stays the size it was at two lines');
        const history = await store.history('s1');
        history.length.should.equal(82);
        texts(history).slice(0, 4).should.eql(['hi', 'Q1?', 'a0', 'q0']);
        texts(history).slice(-2).should.eql(['a39', 'q39']);
        should((await store.liveSession(conv('c1')))!.historyLines).equal(82);
      });

      it(`keeps the last ${200} lines`, async function () {
        const s = session('s2', 'c2');
        for (let i = 0; i < 25; i++) {
          say(s, ...Array.from({ length: 10 }, (_, j) => `l${i * 10 + j}`));
          await step(s);
        }
        const history = await store.history('s2');
        history.length.should.equal(HISTORY_LIMIT);
        texts(history)[0].should.equal(`l${250 - HISTORY_LIMIT}`);
        texts(history).at(-1)!.should.equal('l249');
      });

      it('appends nothing twice when the same commit is tried again (its reply lost)', async function () {
        const s = session('s3', 'c3');
        say(s, 'one');
        await step(s);
        say(s, 'two', 'three');
        const lease = (await store.claim(conv('c3'), 'me', 5000))!;
        await store.commit({ lease, session: s });
        await store.commit({ lease, session: s });
        await store.release(lease);
        texts(await store.history('s3')).should.eql(['one', 'two', 'three']);
      });

      it('removes the history with a Session that ended, and with one another Session replaced', async function () {
        const s = session('s4', 'c4');
        say(s, 'bye');
        await step(s);
        s.state = 'ended';
        s.waitingAt = undefined;
        await step(s);
        (await store.history('s4')).should.eql([]);
        const old = session('s5', 'c5');
        say(old, 'old');
        await step(old);
        const next = session('s6', 'c5');
        say(next, 'new');
        await step(next);
        (await store.history('s5')).should.eql([]);
        texts(await store.history('s6')).should.eql(['new']);
      });
    });
  }
});

/**
 * A Session's log is kept apart the same way: every status of every message a Session sends is an
 * entry, so inside the record it made each step of a long conversation write up to LOG_LIMIT
 * entries again.
 */
describe("a Session's log, kept apart from its record", function () {
  this.timeout(30000);
  before(function () {
    dir = mkdtempSync(join(tmpdir(), 'cs-log-'));
  });
  after(async function () {
    await redis?.close();
    redis = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  for (const kind of kinds) {
    describe(kind.name, function () {
      let store: SessionStore;
      beforeEach(async function () {
        store = await kind.open();
      });
      afterEach(async function () {
        await kind.close(store);
      });

      async function step(s: SessionRecord): Promise<void> {
        const lease = (await store.claim(conv(s.key), 'me', 5000))!;
        await store.commit({ lease, session: s });
        await store.release(lease);
        s.newHistory = undefined;
        s.newLog = undefined;
      }

      it('appends each step’s entries beside its history lines; the record carries none and does not grow', async function () {
        const s = session('g1', 'd1');
        say(s, 'hi');
        note(s, 'message SM1 to +15550001111: sent');
        await step(s);
        const small = (await kind.rawRecord(store, 'g1'))!;
        for (let i = 0; i < 40; i++) {
          const live = (await store.liveSession(conv('d1')))!;
          should(live.newLog).be.undefined();
          should(live).not.have.property('log');
          note(live, `message SM${i}0 to +15550001111: delivered`, `message SM${i}1 to +15550001111: read`);
          if (i % 2) say(live, `a${i}`);
          await step(live);
        }
        const record = (await kind.rawRecord(store, 'g1'))!;
        record.should.not.containEql('SM390');
        should(record.length).be.belowOrEqual(small.length + 2, 'the record stays the size it was at one entry');
        const log = await store.sessionLog('g1');
        log.length.should.equal(81);
        messages(log).slice(0, 2).should.eql(['message SM1 to +15550001111: sent', 'message SM00 to +15550001111: delivered']);
        messages(log).at(-1)!.should.equal('message SM391 to +15550001111: read');
        texts(await store.history('g1')).should.eql(['hi', ...Array.from({ length: 20 }, (_, i) => `a${2 * i + 1}`)]);
        should((await store.liveSession(conv('d1')))!.logLines).equal(81);
      });

      it(`keeps the last ${100} entries`, async function () {
        const s = session('g2', 'd2');
        for (let i = 0; i < 13; i++) {
          note(s, ...Array.from({ length: 10 }, (_, j) => `e${i * 10 + j}`));
          await step(s);
        }
        const log = await store.sessionLog('g2');
        log.length.should.equal(LOG_LIMIT);
        messages(log)[0].should.equal(`e${130 - LOG_LIMIT}`);
        messages(log).at(-1)!.should.equal('e129');
      });

      it('appends nothing twice when the same commit is tried again (its reply lost)', async function () {
        const s = session('g3', 'd3');
        note(s, 'one');
        await step(s);
        note(s, 'two', 'three');
        const lease = (await store.claim(conv('d3'), 'me', 5000))!;
        await store.commit({ lease, session: s });
        await store.commit({ lease, session: s });
        await store.release(lease);
        messages(await store.sessionLog('g3')).should.eql(['one', 'two', 'three']);
      });

      it('removes the log with a Session that ended, and with one another Session replaced', async function () {
        const s = session('g4', 'd4');
        note(s, 'bye');
        await step(s);
        s.state = 'ended';
        s.waitingAt = undefined;
        await step(s);
        (await store.sessionLog('g4')).should.eql([]);
        const old = session('g5', 'd5');
        note(old, 'old');
        await step(old);
        const next = session('g6', 'd5');
        note(next, 'new');
        await step(next);
        (await store.sessionLog('g5')).should.eql([]);
        messages(await store.sessionLog('g6')).should.eql(['new']);
      });
    });
  }
});
