import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import should from 'should';
import type { SessionRecord } from '../../src/model/session';
import type { DatabaseConstructor } from '../../src/stores/sqlite/sqlite';
import { sessionRecord } from '../harness/store-records';

// The built package, as Node-RED loads it.

const { SqliteStore } = require('../../../dist/stores/sqlite/sqlite-store.js');

const { StoreUnavailable } = require('../../../dist/stores/session-store.js');

const { loadSqlite } = require('../../../dist/stores/sqlite/sqlite.js');

// The stores' lines in English, as a store built without a runtime says them.
const say = require('../../../dist/model/texts.js').coreSay();

type Store = import('../../src/stores/sqlite/sqlite-store').SqliteStore;

function session(id: string, conversation: string, vars: Record<string, unknown> = { n: 1 }): SessionRecord {
  return sessionRecord({ id, key: conversation, vars });
}

const conv = (conversation: string) => ({ environment: 'env1', conversation });

/**
 * The durable store writes the steps and messages asked for in the same turn of the event loop in
 * one transaction (group commit). What must still hold: nothing resolves before it is on disk, and
 * each write stays all-or-nothing on its own.
 */
describe('the SQLite store under many writes at once (group commit)', function () {
  const Database = loadSqlite() as DatabaseConstructor;
  let dir: string;
  let path: string;
  let store: Store;
  const logged: string[] = [];

  beforeEach(function () {
    dir = mkdtempSync(join(tmpdir(), 'cs-group-commit-'));
    path = join(dir, 'sessions.db');
    store = new SqliteStore(Database, { path, synchronous: 'NORMAL', log: { warn: (l: string) => logged.push(l), error: (l: string) => logged.push(l) }, say });
  });
  afterEach(async function () {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** What another connection to the file sees: only what was committed. */
  function onDisk<T>(read: (db: InstanceType<DatabaseConstructor>) => T): T {
    const db = new Database(path);
    try {
      return read(db);
    } finally {
      db.close();
    }
  }

  it('resolves each of 200 messages recorded at once only when it is on disk, in order, with duplicates refused', async function () {
    const recorded = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        store.record({
          ...conv(`c${i % 20}`),
          kind: 'messaging',
          payload: { text: `m${i}` },
          dedupe: { key: `sid-${i % 150}`, ttlMs: 60_000 },
        }),
      ),
    );
    const seqs = recorded.filter((r): r is { seq: number } => r !== 'duplicate').map((r) => r.seq);
    should(recorded.filter((r) => r === 'duplicate')).have.length(50);
    should(seqs).eql([...seqs].sort((a, b) => a - b));
    const rows = onDisk((db) => db.prepare('SELECT seq, payload FROM inbound ORDER BY seq').all());
    should(rows.map((r) => Number(r.seq))).eql(seqs);
    should(rows.map((r) => JSON.parse(String(r.payload)).text)).eql(Array.from({ length: 150 }, (_, i) => `m${i}`));
  });

  it('undoes a step that cannot be saved on its own; the steps saved with it are kept', async function () {
    const names = ['ok-1', 'broken', 'ok-2'];
    for (const name of names) await store.record({ ...conv(name), kind: 'messaging', payload: { text: 'answer' } });
    const steps = await Promise.all(
      names.map(async (name) => {
        const lease = await store.claim(conv(name), 'me');
        const item = await store.next(conv(name));
        return { name, lease: lease!, item: item! };
      }),
    );
    // A flow put a value into the Session's variables that JSON cannot hold.
    const outcomes = await Promise.allSettled(
      steps.map(({ name, lease, item }) =>
        store.commit({
          lease,
          consumed: item.seq,
          session: session(`s-${name}`, name, name === 'broken' ? { big: BigInt(1) } : { n: 1 }),
        }),
      ),
    );
    should(outcomes.map((o) => o.status)).eql(['fulfilled', 'rejected', 'fulfilled']);
    should((outcomes[1] as PromiseRejectedResult).reason).be.instanceOf(StoreUnavailable);
    should((outcomes[1] as PromiseRejectedResult).reason.message).match(/could not save a Session step/);
    const saved = onDisk((db) =>
      db
        .prepare('SELECT conversation FROM sessions ORDER BY conversation')
        .all()
        .map((r) => String(r.conversation)),
    );
    should(saved).eql(['ok-1', 'ok-2']);
    // The broken step consumed its message before it failed: that is undone too, so it is handled again.
    const left = onDisk((db) =>
      db
        .prepare('SELECT conversation FROM inbound')
        .all()
        .map((r) => String(r.conversation)),
    );
    should(left).eql(['broken']);
  });
});
