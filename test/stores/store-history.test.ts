import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import should from 'should';
import type { HistoryEntry, SessionLogEntry, SessionRecord } from '../../src/model/session';
import type { SessionStore, StepCommit } from '../../src/stores/session-store';
import type { DatabaseConstructor } from '../../src/stores/sqlite/sqlite';
import { RedisServer } from '../harness/redis';
import { sessionRecord } from '../harness/store-records';
import { contextStoreOver } from '../harness/context-store';

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
      const context = contextStoreOver(values);
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

/** A kind of lines a Session keeps apart from its record: its history, or its log. */
interface Lines {
  name: string;
  limit: number;
  /** Adds lines to a Session as the engine does, each with its text. */
  add(s: SessionRecord, ...texts: string[]): void;
  /** The lines the store keeps, as their texts. */
  read(store: SessionStore, id: string): Promise<string[]>;
  /** The record's count of them, and its lines not yet stored. */
  count(s: SessionRecord): number;
  pending(s: SessionRecord): unknown[] | undefined;
}

const lineKinds: Lines[] = [
  {
    name: 'history',
    limit: HISTORY_LIMIT,
    add: say,
    read: async (store, id) => texts(await store.history(id)),
    count: (s) => s.historyLines,
    pending: (s) => s.newHistory,
  },
  {
    // Every status of every message a Session sends is an entry, so inside the record the log made
    // each step of a long conversation write up to LOG_LIMIT entries again.
    name: 'log',
    limit: LOG_LIMIT,
    add: note,
    read: async (store, id) => messages(await store.sessionLog(id)),
    count: (s) => s.logLines,
    pending: (s) => s.newLog,
  },
];

/**
 * A Session's history and its log are kept apart from its record: a step appends its lines and
 * never reads or rewrites the others, so the record a step reads and writes stays the same size
 * however long the conversation; what shows them reads them whole.
 */
for (const lines of lineKinds) {
  describe(`a Session's ${lines.name}, kept apart from its record`, function () {
    this.timeout(30000);
    before(function () {
      dir = mkdtempSync(join(tmpdir(), `cs-${lines.name}-`));
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
          s.newLog = undefined;
        }

        it('appends each step’s lines; the record the next step reads carries none of them and does not grow', async function () {
          const s = session('s1', 'c1');
          lines.add(s, 'hi', 'Q1?');
          await step(s);
          const small = (await kind.rawRecord(store, 's1'))!;
          for (let i = 0; i < 40; i++) {
            const live = (await store.liveSession(conv('c1')))!;
            should(lines.pending(live)).be.undefined();
            lines.add(live, `a${i}`, `q${i}`);
            await step(live);
          }
          const record = (await kind.rawRecord(store, 's1'))!;
          record.should.not.containEql('a39');
          should(record.length).be.belowOrEqual(small.length + 2, 'the record stays the size it was at two lines');
          const kept = await lines.read(store, 's1');
          kept.length.should.equal(82);
          kept.slice(0, 4).should.eql(['hi', 'Q1?', 'a0', 'q0']);
          kept.slice(-2).should.eql(['a39', 'q39']);
          should(lines.count((await store.liveSession(conv('c1')))!)).equal(82);
        });

        it(`keeps the last ${lines.limit} lines`, async function () {
          const s = session('s2', 'c2');
          for (let i = 0; i < 25; i++) {
            lines.add(s, ...Array.from({ length: 10 }, (_, j) => `l${i * 10 + j}`));
            await step(s);
          }
          const kept = await lines.read(store, 's2');
          kept.length.should.equal(lines.limit);
          kept[0].should.equal(`l${250 - lines.limit}`);
          kept.at(-1)!.should.equal('l249');
        });

        it('appends nothing twice when the same commit is tried again (its reply lost)', async function () {
          const s = session('s3', 'c3');
          lines.add(s, 'one');
          await step(s);
          lines.add(s, 'two', 'three');
          const lease = (await store.claim(conv('c3'), 'me', 5000))!;
          await store.commit({ lease, session: s });
          await store.commit({ lease, session: s });
          await store.release(lease);
          (await lines.read(store, 's3')).should.eql(['one', 'two', 'three']);
        });

        it(`removes the ${lines.name} with a Session that ended, and with one another Session replaced`, async function () {
          const s = session('s4', 'c4');
          lines.add(s, 'bye');
          await step(s);
          s.state = 'ended';
          s.waitingAt = undefined;
          await step(s);
          (await lines.read(store, 's4')).should.eql([]);
          const old = session('s5', 'c5');
          lines.add(old, 'old');
          await step(old);
          const next = session('s6', 'c5');
          lines.add(next, 'new');
          await step(next);
          (await lines.read(store, 's5')).should.eql([]);
          (await lines.read(store, 's6')).should.eql(['new']);
        });

        if (lines.name === 'log') {
          it('keeps the log and the history apart from each other: a step with both appends each to its own', async function () {
            const s = session('s7', 'c7');
            say(s, 'hi');
            note(s, 'message SM1 to +15550001111: sent');
            await step(s);
            note(s, 'message SM1 to +15550001111: delivered');
            await step(s);
            say(s, 'again');
            await step(s);
            texts(await store.history('s7')).should.eql(['hi', 'again']);
            messages(await store.sessionLog('s7')).should.eql(['message SM1 to +15550001111: sent', 'message SM1 to +15550001111: delivered']);
          });
        }
      });
    }
  });
}
