import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import should from 'should';
import type { SessionStore } from '../../src/stores/session-store';
import type { DatabaseConstructor } from '../../src/stores/sqlite/sqlite';
import { sessionRecord } from '../harness/store-records';

// The built package, as Node-RED loads it.

const { SqliteStore } = require('../../../dist/stores/sqlite/sqlite-store.js');

const { MemoryStore } = require('../../../dist/stores/memory/memory-store.js');

const { loadSqlite } = require('../../../dist/stores/sqlite/sqlite.js');

// The stores' lines in English, as a store built without a runtime says them.
const say = require('../../../dist/model/texts.js').coreSay();

const conv = (conversation: string) => ({ environment: 'env1', conversation });

/**
 * The worker takes a conversation with its first item in one call (`claimNext`) and lets go only
 * when nothing waits (`releaseIfIdle`), the same on the stores one process owns as on Redis
 * (redis-store.test.ts).
 */
for (const kind of ['SQLite', 'memory'] as const) {
  describe(`the ${kind} store's claim with the first item, and release when idle`, function () {
    let dir: string;
    let store: Required<SessionStore>;

    beforeEach(function () {
      dir = mkdtempSync(join(tmpdir(), 'cs-claim-next-'));
      const log = { warn: () => undefined, error: () => undefined };
      store =
        kind === 'SQLite'
          ? new SqliteStore(loadSqlite() as DatabaseConstructor, { path: join(dir, 'sessions.db'), synchronous: 'NORMAL', log, say })
          : new MemoryStore('memory');
    });
    afterEach(async function () {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it('hands over the lease with the oldest item, to one holder at a time', async function () {
      const empty = (await store.claimNext(conv('c'), 'me', 30_000))!;
      should(empty.item).be.undefined();
      (await store.releaseIfIdle(empty.lease)).should.be.true();
      const one = (await store.record({ ...conv('c'), kind: 'message', payload: { text: 'one' } })) as { seq: number };
      await store.record({ ...conv('c'), kind: 'message', payload: { text: 'two' } });
      const claimed = (await store.claimNext(conv('c'), 'me', 30_000))!;
      should(claimed.item).containDeep({ seq: one.seq, kind: 'message', payload: { text: 'one' } });
      claimed.lease.fence.should.be.above(empty.lease.fence);
      should(await store.claimNext(conv('c'), 'me', 30_000)).be.undefined();
      should(await store.claim(conv('c'), 'me', 30_000)).be.undefined();
    });

    it('keeps the lease while an item waits and lets go once none does', async function () {
      await store.record({ ...conv('c'), kind: 'message', payload: 1 });
      const { lease, item } = (await store.claimNext(conv('c'), 'me', 30_000))!;
      await store.record({ ...conv('c'), kind: 'message', payload: 2 });
      await store.commit({ lease, consumed: item!.seq });
      (await store.releaseIfIdle(lease)).should.be.false();
      should(await store.claim(conv('c'), 'me', 30_000)).be.undefined();
      await store.commit({ lease, consumed: (await store.next(conv('c')))!.seq });
      (await store.releaseIfIdle(lease)).should.be.true();
      (await store.releaseIfIdle(lease)).should.be.true(); // already let go: nothing to keep
      should(await store.claim(conv('c'), 'me', 30_000)).not.be.undefined();
    });

    if (kind === 'SQLite') {
      it('counts as waiting the items a previous run left in the file', async function () {
        await store.record({ ...conv('c'), kind: 'message', payload: 1 });
        await store.record({ ...conv('c'), kind: 'message', payload: 2 });
        await store.close();
        const log = { warn: () => undefined, error: () => undefined };
        store = new SqliteStore(loadSqlite() as DatabaseConstructor, { path: join(dir, 'sessions.db'), synchronous: 'NORMAL', log, say });
        const { lease, item } = (await store.claimNext(conv('c'), 'me', 30_000))!;
        should(item).containDeep({ payload: 1 });
        await store.commit({ lease, consumed: item!.seq });
        (await store.releaseIfIdle(lease)).should.be.false();
        await store.commit({ lease, consumed: (await store.next(conv('c')))!.seq });
        (await store.releaseIfIdle(lease)).should.be.true();
      });

      it("hands over the conversation's live Session with its first item, read in the same call", async function () {
        const first = await store.claimNext(conv('c'), 'me', 30_000);
        const session = sessionRecord({ id: 's1', key: 'c', vars: { n: 1 }, lastActivity: 1 });
        await store.commit({ lease: first!.lease, session });
        await store.release(first!.lease);
        await store.record({ ...conv('c'), kind: 'message', payload: 'hi' });
        const claimed = (await store.claimNext(conv('c'), 'me', 30_000))!;
        should(claimed.item).containDeep({ payload: 'hi' });
        should(claimed.live?.session).containDeep({ id: 's1', vars: { n: 1 }, waitingAt: { nodeId: 'ask' } });
        await store.commit({ lease: claimed.lease, consumed: claimed.item!.seq, session: { ...session, state: 'completed' } });
        await store.release(claimed.lease);
        await store.record({ ...conv('c'), kind: 'message', payload: 'again' });
        const none = (await store.claimNext(conv('c'), 'me', 30_000))!;
        should(none.live).eql({ session: undefined });
      });
    }
  });
}
