import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import should from 'should';
import type { SessionRecord } from '../../src/model/session';
import type { DatabaseConstructor } from '../../src/stores/sqlite/sqlite';

// The built package, as Node-RED loads it.

const { SqliteStore } = require('../../../dist/stores/sqlite/sqlite-store.js');

const { loadSqlite } = require('../../../dist/stores/sqlite/sqlite.js');

// The stores' lines in English, as a store built without a runtime says them.
const say = require('../../../dist/model/texts.js').coreSay();

type Store = import('../../src/stores/sqlite/sqlite-store').SqliteStore;

function session(id: string, environment: string, conversation: string, waitingAt?: string): SessionRecord {
  return {
    v: 3,
    id,
    channel: 'TelcoMessagingSms',
    environment,
    process: 'p1',
    key: conversation,
    isTest: false,
    vars: {},
    binding: {},
    ...(waitingAt ? { waitingAt: { nodeId: waitingAt, nodeType: 'input-task', since: 1 } } : {}),
    historyLines: 0,
    logLines: 0,
    created: 1,
    lastActivity: Date.now(),
    state: waitingAt ? 'waiting' : 'running',
  };
}

/**
 * The "N waiting" status and Max Sessions read counts the store keeps as Sessions change, instead
 * of counting every Session each time (40 ms at a million waiting Sessions).
 */
describe("the SQLite store's Session counts", function () {
  const Database = loadSqlite() as DatabaseConstructor;
  const log = { warn: () => undefined, error: () => undefined };
  let dir: string;
  let path: string;
  let store: Store;

  beforeEach(function () {
    dir = mkdtempSync(join(tmpdir(), 'cs-counts-'));
    path = join(dir, 'sessions.db');
    store = new SqliteStore(Database, { path, synchronous: 'NORMAL', log, say });
  });
  afterEach(async function () {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function step(s: SessionRecord): Promise<void> {
    const ref = { environment: s.environment, conversation: s.key };
    const lease = await store.claim(ref, 'me');
    await store.commit({ lease: lease!, session: s });
    await store.release(lease!);
  }

  /** What counting every Session says. */
  function counted(): { byNode: Record<string, number>; total: number; env1: number } {
    const db = new Database(path);
    try {
      const byNode = Object.fromEntries(
        db
          .prepare('SELECT waiting_node AS node, COUNT(*) AS n FROM sessions WHERE waiting_node IS NOT NULL GROUP BY waiting_node')
          .all()
          .map((r) => [String(r.node), Number(r.n)]),
      );
      const total = Number(db.prepare('SELECT COUNT(*) AS n FROM sessions').get()?.n);
      const env1 = Number(db.prepare("SELECT COUNT(*) AS n FROM sessions WHERE environment = 'env1'").get()?.n);
      return { byNode, total, env1 };
    } finally {
      db.close();
    }
  }

  async function stated(): Promise<{ byNode: Record<string, number>; total: number; env1: number }> {
    return { byNode: Object.fromEntries(await store.waitingByNode()), total: await store.count({}), env1: await store.count({ environment: 'env1' }) };
  }

  it('follows Sessions as they open, move on, wait elsewhere, run, end and are replaced', async function () {
    for (const i of [1, 2, 3]) await step(session(`a${i}`, 'env1', `c${i}`, 'ask'));
    await step(session('b1', 'env2', 'd1', 'ask'));
    await step(session('b2', 'env2', 'd2', 'other'));
    should(await stated()).eql({ byNode: { ask: 4, other: 1 }, total: 5, env1: 3 });

    await step(session('a1', 'env1', 'c1', 'ask')); // the same wait again: nothing changes
    await step(session('a2', 'env1', 'c2', 'other'));
    await step(session('a3', 'env1', 'c3')); // running
    await step({ ...session('b1', 'env2', 'd1'), state: 'completed' });
    await step(session('a4', 'env1', 'c1', 'other')); // a new Session of c1's conversation replaces a1
    should(await stated()).eql({ byNode: { other: 3 }, total: 4, env1: 3 });
    should(await stated()).eql(counted());
  });

  it('counts the Sessions of a database written before the counts existed, once, at open', async function () {
    for (const i of [1, 2, 3]) await step(session(`a${i}`, 'env1', `c${i}`, i === 3 ? 'other' : 'ask'));
    await store.close();
    const old = new Database(path);
    old.exec(`DROP TRIGGER session_counts_insert; DROP TRIGGER session_counts_delete; DROP TRIGGER session_counts_update;
      DROP TABLE session_counts; DELETE FROM meta WHERE key = 'session_counts';`);
    old
      .prepare("INSERT INTO sessions (id, environment, conversation, waiting_node, activity, record) VALUES ('x', 'env2', 'x', 'ask', 1, ?)")
      .run(JSON.stringify(session('x', 'env2', 'x', 'ask')));
    old.close();
    store = new SqliteStore(Database, { path, synchronous: 'NORMAL', log, say });
    should(await stated()).eql({ byNode: { ask: 3, other: 1 }, total: 4, env1: 3 });
    should(await stated()).eql(counted());
  });
});
