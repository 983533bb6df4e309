import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import should from 'should';
import type { SessionRecord } from '../../src/model/session';
import type { SessionTimer } from '../../src/stores/session-store';
import type { DatabaseConstructor } from '../../src/stores/sqlite/sqlite';

// The built package, as Node-RED loads it.

const { SqliteStore } = require('../../../dist/stores/sqlite/sqlite-store.js');

const { loadSqlite } = require('../../../dist/stores/sqlite/sqlite.js');

// The stores' lines in English, as a store built without a runtime says them.
const say = require('../../../dist/model/texts.js').coreSay();

type Store = import('../../src/stores/sqlite/sqlite-store').SqliteStore;

function session(id: string, conversation: string, waitingAt: string, lastActivity: number): SessionRecord {
  return {
    v: 3,
    id,
    channel: 'TeamChatChannel',
    environment: 'env1',
    process: 'p1',
    key: conversation,
    isTest: false,
    vars: { step: lastActivity },
    binding: {},
    waitingAt: { nodeId: waitingAt, nodeType: 'input-task', since: lastActivity },
    historyLines: 0,
    logLines: 0,
    created: 1,
    lastActivity,
    state: 'waiting',
  };
}

/**
 * A step writes only what it changed (the record and activity of a Session that stays where it
 * was; each timer in its row); what it reads back must be what the whole rewrite gave before.
 */
describe("the SQLite store's step writes", function () {
  const Database = loadSqlite() as DatabaseConstructor;
  const log = { warn: () => undefined, error: () => undefined };
  let dir: string;
  let store: Store;

  beforeEach(function () {
    dir = mkdtempSync(join(tmpdir(), 'cs-step-writes-'));
    store = new SqliteStore(Database, { path: join(dir, 'sessions.db'), synchronous: 'NORMAL', log, say });
  });
  afterEach(async function () {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function step(s: SessionRecord, timers?: SessionTimer[], conversation = s.key): Promise<void> {
    const lease = await store.claim({ environment: s.environment, conversation }, 'me');
    await store.commit({ lease: lease!, session: s, timers });
    await store.release(lease!);
  }

  it("keeps each step's record of a Session that waits at the same node again", async function () {
    await step(session('s1', 'c1', 'ask', 1000));
    await step(session('s1', 'c1', 'ask', 2000));
    const live = await store.liveSession({ environment: 'env1', conversation: 'c1' });
    should(live?.vars).eql({ step: 2000 });
    should((await store.list({ limit: 10 })).map((s) => s.lastActivity)).eql([2000]);
  });

  it('moves a Session to its new conversation, replacing the older Session there', async function () {
    await step(session('old', 'thread-1', 'ask', 1000));
    await step(session('s1', 'channel-1', 'ask', 1000));
    // A team-chat Session that opened its thread (PerThread): the thread is its conversation now.
    await step(session('s1', 'thread-1', 'ask', 2000), undefined, 'channel-1');
    should(await store.liveSession({ environment: 'env1', conversation: 'channel-1' })).be.undefined();
    should((await store.liveSession({ environment: 'env1', conversation: 'thread-1' }))?.id).equal('s1');
    should(await store.sessionById('old')).be.undefined();
    should(await store.count({})).equal(1);
  });

  it('replaces each kind of timer and removes a kind the step no longer has', async function () {
    const timeout: SessionTimer = { kind: 'timeout', due: 1500, payload: { since: 1000 } };
    await step(session('s1', 'c1', 'ask', 1000), [timeout, { kind: 'expire', due: 9000, payload: { lastActivity: 1000 } }]);
    await step(session('s1', 'c1', 'ask', 2000), [{ kind: 'expire', due: 3000, payload: { lastActivity: 2000 } }]);
    should(await store.takeDueTimers(2500, 10)).eql([]); // the first step's timeout is gone
    should(await store.takeDueTimers(3000, 10)).eql([{ environment: 'env1', conversation: 'c1' }]);
    const item = await store.next({ environment: 'env1', conversation: 'c1' });
    should(item).containDeep({ kind: 'expire', payload: { sessionId: 's1', due: 3000, wait: { lastActivity: 2000 } } });
    should(await store.takeDueTimers(100_000, 10)).eql([]); // the first step's expiry is gone too
  });

  /** A Session's timer rows as another connection to the file (a restarted Node-RED) reads them. */
  function timerRows(id: string): Record<string, { due: number; conversation: string; payload: unknown }> {
    const db = new Database(join(dir, 'sessions.db'), { readOnly: true } as { timeout?: number });
    try {
      const rows = db.prepare('SELECT kind, due, conversation, payload FROM timers WHERE session_id = ?').all(id);
      return Object.fromEntries(
        rows.map((r) => [String(r.kind), { due: Number(r.due), conversation: String(r.conversation), payload: JSON.parse(String(r.payload)) }]),
      );
    } finally {
      db.close();
    }
  }

  const expire = (due: number, lastActivity: number): SessionTimer => ({ kind: 'expire', due, payload: { lastActivity } });
  const timeout = (due: number, since: number): SessionTimer => ({ kind: 'timeout', due, payload: { since } });

  it('leaves an idle expiry row that is due no later than the step asks; it fires at that due, with what it was armed with', async function () {
    await step(session('s1', 'c1', 'ask', 1000), [expire(9000, 1000)]);
    await step(session('s1', 'c1', 'ask', 2000), [expire(10_000, 2000)]);
    await step(session('s1', 'c1', 'ask', 3000), [expire(11_000, 3000)]);
    should(timerRows('s1')).eql({ expire: { due: 9000, conversation: 'c1', payload: { lastActivity: 1000 } } });
    should(await store.takeDueTimers(8999, 10)).eql([]);
    should(await store.takeDueTimers(9000, 10)).eql([{ environment: 'env1', conversation: 'c1' }]);
    const item = await store.next({ environment: 'env1', conversation: 'c1' });
    // The engine's step for it finds the Session active since (3000), and arms its expiry again.
    should(item).containDeep({ kind: 'expire', payload: { sessionId: 's1', due: 9000, wait: { lastActivity: 1000 } } });
    should(timerRows('s1')).eql({});
    await step(session('s1', 'c1', 'ask', 3000), [expire(11_000, 3000)]);
    should(timerRows('s1')).eql({ expire: { due: 11_000, conversation: 'c1', payload: { lastActivity: 3000 } } });
  });

  it('moves an idle expiry due earlier, a changed timeout, and the timers of a Session that moved; removes a kind the step no longer has', async function () {
    await step(session('s1', 'c1', 'ask', 1000), [timeout(1500, 1000), expire(9000, 1000)]);
    // A shorter idle timeout (a restart with other settings): the expiry is due earlier.
    await step(session('s1', 'c1', 'ask', 2000), [timeout(1500, 1000), expire(5000, 2000)]);
    should(timerRows('s1')).eql({
      timeout: { due: 1500, conversation: 'c1', payload: { since: 1000 } },
      expire: { due: 5000, conversation: 'c1', payload: { lastActivity: 2000 } },
    });
    // The Session waits again: its timeout is due later, or as late with another payload.
    await step(session('s1', 'c1', 'ask', 3000), [timeout(3500, 3000), expire(8000, 3000)]);
    should(timerRows('s1').timeout).eql({ due: 3500, conversation: 'c1', payload: { since: 3000 } });
    await step(session('s1', 'c1', 'ask', 3500), [timeout(3500, 3400), expire(8000, 3500)]);
    should(timerRows('s1').timeout).eql({ due: 3500, conversation: 'c1', payload: { since: 3400 } });
    await step(session('s1', 'c1', 'ask', 4000), [expire(9000, 4000)]);
    should(timerRows('s1')).eql({ expire: { due: 5000, conversation: 'c1', payload: { lastActivity: 2000 } } });
    // A team-chat Session that opened its thread: its expiry fires in the thread, whatever its due.
    await step(session('s1', 'thread-1', 'ask', 6000), [expire(20_000, 6000)], 'c1');
    should(timerRows('s1')).eql({ expire: { due: 20_000, conversation: 'thread-1', payload: { lastActivity: 6000 } } });
    await step(session('s1', 'thread-1', 'ask', 7000), []);
    should(timerRows('s1')).eql({});
  });
});
