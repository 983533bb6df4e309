import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import should from 'should';
import type { SessionStore } from '../../src/stores/session-store';
import type { DatabaseConstructor } from '../../src/stores/sqlite/sqlite';
import { RedisServer } from '../harness/redis';

// The built package, as Node-RED loads it.
const { SqliteStore } = require('../../../dist/stores/sqlite/sqlite-store.js');
const { MemoryStore } = require('../../../dist/stores/memory/memory-store.js');
const { loadSqlite } = require('../../../dist/stores/sqlite/sqlite.js');

// The stores' lines in English, as a store built without a runtime says them.
const say = require('../../../dist/model/texts.js').coreSay();
const redisContext = require('../../../redis-context.js');

const conv = { environment: 'env1', conversation: 'whatsapp:+15550001111>whatsapp:+15550002222' };
const KEY = 'messenger-window/env1/whatsapp:+15550001111>whatsapp:+15550002222';

/**
 * `remembered` (the messenger's 24-hour window): a key a commit's marks set is remembered for its
 * time to live, renewed by each later mark, without `remembered` setting anything itself; the
 * same on the three stores.
 */
for (const kind of ['SQLite', 'memory', 'Redis'] as const) {
  describe(`the ${kind} store remembers a mark without setting one`, function () {
    let dir: string;
    let redis: RedisServer | undefined;
    let store: SessionStore & { remembered(key: string): Promise<boolean> };

    beforeEach(async function () {
      dir = mkdtempSync(join(tmpdir(), 'cs-remembered-'));
      const log = { warn: () => undefined, error: () => undefined, info: () => undefined };
      if (kind === 'Redis') {
        redis = await RedisServer.start();
        store = redisContext.sessionStoreFor({ url: redis.url, prefix: 'rm:' }, log);
        await (store as any).whenConnected(5000);
      } else {
        store =
          kind === 'SQLite'
            ? new SqliteStore(loadSqlite() as DatabaseConstructor, { path: join(dir, 'sessions.db'), synchronous: 'NORMAL', log, say })
            : new MemoryStore('memory');
      }
    });
    afterEach(async function () {
      await store.close();
      await redis?.close();
      rmSync(dir, { recursive: true, force: true });
    });

    async function mark(ttlMs: number): Promise<void> {
      const lease = (await store.claim(conv, 'me', 30_000))!;
      await store.commit({ lease, marks: [{ key: KEY, ttlMs }] });
      await store.release(lease);
    }

    it('answers false for a key never set, and sets nothing by asking', async function () {
      should(await store.remembered(KEY)).be.false();
      should(await store.remembered(KEY)).be.false();
      // `seen` would now find it unset (so asking did not set it), and set it.
      should(await store.seen(KEY, 60_000)).be.false();
      should(await store.remembered(KEY)).be.true();
    });

    it('remembers a mark for its time to live, and a later mark renews it', async function () {
      this.timeout(10_000);
      // Generous times: a shared machine may be slow, but 1.2 s apart against a 2 s time to live still tell apart.
      const first = Date.now();
      await mark(2000);
      should(await store.remembered(KEY)).be.true();
      await new Promise((r) => setTimeout(r, 1200));
      await mark(2000);
      const second = Date.now();
      await new Promise((r) => setTimeout(r, 1200));
      // Past the first mark's time to live, within the second's.
      if (Date.now() - second < 2000) should(await store.remembered(KEY)).be.true(`${Date.now() - first} ms after the first mark`);
      await new Promise((r) => setTimeout(r, Math.max(0, second + 2100 - Date.now())));
      should(await store.remembered(KEY)).be.false();
    });
  });
}
