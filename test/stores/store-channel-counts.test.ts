import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import should from 'should';
import type { ChannelName } from '../../src/model/channels';
import type { SessionRecord } from '../../src/model/session';
import type { ChannelCount, SessionStore } from '../../src/stores/session-store';
import type { DatabaseConstructor } from '../../src/stores/sqlite/sqlite';
import { commitStep, redisStoresInBlock, sessionRecord } from '../harness/store-records';

// The built package, as Node-RED loads it.

const { SqliteStore } = require('../../../dist/stores/sqlite/sqlite-store.js');
// The stores' lines in English, as a store built without a runtime says them.
const say = require('../../../dist/model/texts.js').coreSay();

const { MemoryStore } = require('../../../dist/stores/memory/memory-store.js');

const { loadSqlite } = require('../../../dist/stores/sqlite/sqlite.js');

function session(id: string, environment: string, conversation: string, channel: ChannelName, waitingAt?: string): SessionRecord {
  return sessionRecord({
    id,
    channel,
    environment,
    key: conversation,
    vars: { execution: { channel: 'not the Channel' } },
    waitingAt: waitingAt ? { nodeId: waitingAt, nodeType: 'input-task', since: 1 } : undefined,
    state: waitingAt ? 'waiting' : 'running',
  });
}

/** The counts in a set order, to compare. */
function sorted(counts: ChannelCount[]): ChannelCount[] {
  return [...counts].sort((a, b) => `${a.environment}/${a.channel}`.localeCompare(`${b.environment}/${b.channel}`));
}

/** What counting every live Session says. */
async function counted(store: SessionStore): Promise<ChannelCount[]> {
  const counts = new Map<string, ChannelCount>();
  for (const s of await store.list({ limit: 1000 })) {
    const key = `${s.environment}/${s.channel}`;
    const count = counts.get(key) ?? { environment: s.environment, channel: s.channel, live: 0, waiting: 0 };
    count.live++;
    if (s.state === 'waiting') count.waiting++;
    counts.set(key, count);
  }
  return sorted([...counts.values()]);
}

const SMS = 'TelcoMessagingSms';
const WA = 'TelcoMessagingMessenger';

/**
 * The counts per Environment and Channel that the metrics' Session gauges read: kept by each store
 * as its commits change Sessions, the same as counting every Session.
 */
function followsSessions(open: () => Promise<SessionStore>) {
  describe('as commits change Sessions', function () {
    let store: SessionStore;
    beforeEach(async function () {
      store = await open();
    });
    afterEach(async function () {
      await store.close();
    });

    const step = (s: SessionRecord, conversation = s.key) => commitStep(store, s, conversation);

    it('follows Sessions as they open, run, wait again, end and are replaced', async function () {
      should(await store.countByChannel()).eql([]);
      await step(session('a1', 'env1', 'c1', SMS, 'ask'));
      await step(session('a2', 'env1', 'c2', SMS));
      await step(session('b1', 'env1', 'w1', WA, 'ask'));
      await step(session('c1', 'env2', 'd1', SMS, 'ask'));
      should(sorted(await store.countByChannel())).eql([
        { environment: 'env1', channel: WA, live: 1, waiting: 1 },
        { environment: 'env1', channel: SMS, live: 2, waiting: 1 },
        { environment: 'env2', channel: SMS, live: 1, waiting: 1 },
      ]);

      await step(session('a1', 'env1', 'c1', SMS, 'ask')); // the same wait again
      await step(session('a1', 'env1', 'c1', SMS, 'other')); // waits elsewhere: still waiting
      await step(session('a2', 'env1', 'c2', SMS, 'ask')); // was running, now waits
      await step({ ...session('b1', 'env1', 'w1', WA), state: 'completed' });
      await step(session('c2', 'env2', 'd1', SMS)); // a new Session of d1's conversation replaces c1
      should(sorted(await store.countByChannel())).eql([
        { environment: 'env1', channel: SMS, live: 2, waiting: 2 },
        { environment: 'env2', channel: SMS, live: 1, waiting: 0 },
      ]);
      should(sorted(await store.countByChannel())).eql(await counted(store));

      await step({ ...session('c2', 'env2', 'd1', SMS), state: 'ended' });
      await step({ ...session('a1', 'env1', 'c1', SMS), state: 'completed' });
      should(await store.countByChannel()).eql([{ environment: 'env1', channel: SMS, live: 1, waiting: 1 }]);
      should(sorted(await store.countByChannel())).eql(await counted(store));
    });
  });
}

describe('Session counts per Environment and Channel', function () {
  this.timeout(30000);
  const log = { info: () => undefined, warn: () => undefined, error: () => undefined };

  describe('SQLite', function () {
    const Database = loadSqlite() as DatabaseConstructor;
    let dir: string;
    beforeEach(function () {
      dir = mkdtempSync(join(tmpdir(), 'cs-channel-counts-'));
    });
    afterEach(function () {
      rmSync(dir, { recursive: true, force: true });
    });
    followsSessions(async () => new SqliteStore(Database, { path: join(dir, 'sessions.db'), synchronous: 'NORMAL', log, say }));

    it("writes each Session's Channel in its row, and a malformed record set aside leaves the counts", async function () {
      const path = join(dir, 'sessions.db');
      const store: SessionStore = new SqliteStore(Database, { path, synchronous: 'NORMAL', log, say });
      try {
        for (const s of [session('s1', 'env1', 'c1', SMS, 'ask'), session('s2', 'env1', 'c2', WA, 'ask')]) {
          const lease = await store.claim({ environment: 'env1', conversation: s.key }, 'me', 5000);
          await store.commit({ lease: lease!, session: s });
          await store.release(lease!);
        }
        const db = new Database(path);
        try {
          should(
            db
              .prepare('SELECT id, channel FROM sessions ORDER BY id')
              .all()
              .map((row) => ({ ...row })),
          ).eql([
            { id: 's1', channel: SMS },
            { id: 's2', channel: WA },
          ]);
          db.prepare(`UPDATE sessions SET record = '{"id":"s2"}' WHERE id = 's2'`).run();
        } finally {
          db.close();
        }
        should(await store.sessionById('s2')).be.undefined();
        should(await store.countByChannel()).eql([{ environment: 'env1', channel: SMS, live: 1, waiting: 1 }]);
      } finally {
        await store.close();
      }
    });
  });

  describe('memory', function () {
    followsSessions(async () => new MemoryStore('memory'));
  });

  describe('Redis', function () {
    const { server, open, nextPrefix } = redisStoresInBlock('cc', log);
    followsSessions(open);

    it('takes a malformed Session set aside out of the counts', async function () {
      const prefix = nextPrefix();
      const store = await open();
      try {
        for (const s of [session('s1', 'env1', 'c1', SMS, 'ask'), session('s2', 'env1', 'c2', WA, 'ask')]) await commitStep(store, s);
        await server().command('HSET', `${prefix}s:sessions`, 's2', '{"id":"s2"}');
        should(await store.sessionById('s2')).be.undefined();
        should(await store.countByChannel()).eql([{ environment: 'env1', channel: SMS, live: 1, waiting: 1 }]);
      } finally {
        await store.close();
      }
    });
  });
});
