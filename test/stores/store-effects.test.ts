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

const conv = { environment: 'env1', conversation: 'T1:C1:1700000000.000100' };

/**
 * The effects journal (`recordEffect`, `effectsOf`): a step's outcomes are kept under their keys
 * while the step is in progress or cut, given back when its item is handed out again (with when it
 * first was), and dropped by its commit; the same on the three stores.
 */
for (const kind of ['SQLite', 'memory', 'Redis'] as const) {
  describe(`the ${kind} store's effects journal`, function () {
    let dir: string;
    let redis: RedisServer | undefined;
    let store: Required<SessionStore>;
    const log = { warn: () => undefined, error: () => undefined, info: () => undefined };
    const openSqlite = () => new SqliteStore(loadSqlite() as DatabaseConstructor, { path: join(dir, 'sessions.db'), synchronous: 'NORMAL', log, say });

    beforeEach(async function () {
      dir = mkdtempSync(join(tmpdir(), 'cs-effects-'));
      if (kind === 'Redis') {
        redis = await RedisServer.start();
        store = redisContext.sessionStoreFor({ url: redis.url, prefix: 'fx:' }, log);
        await (store as any).whenConnected(5000);
      } else store = kind === 'SQLite' ? openSqlite() : new MemoryStore('memory');
    });
    afterEach(async function () {
      await store.close();
      await redis?.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it('keeps what a step sent until its commit, and gives it back when the step runs again', async function () {
      const { seq } = (await store.record({ ...conv, kind: 'message', payload: { text: 'hi' } })) as { seq: number };
      const first = (await store.claimNext(conv, 'me', 30_000))!;
      should(first.item!.again).be.undefined();
      (await store.effectsOf(conv, seq)).size.should.equal(0);
      await store.recordEffect(first.lease, conv, seq, 's1:7:1', { k: 'slack.post', v: { ts: '1700000000.000200', channel: 'C1' } });
      await store.recordEffect(first.lease, conv, seq, 's1:7:2', { k: 'slack.post', v: { ts: '1700000000.000300', channel: 'C1' } });
      // The step is cut (not committed): the item is handed out again, with its journal.
      await store.release(first.lease);
      const again = (await store.claimNext(conv, 'me', 30_000))!;
      again.item!.seq.should.equal(seq);
      should(again.item!.again).be.an.Object();
      again.item!.again!.since.should.be.within(again.item!.at, Date.now());
      const journal = again.item!.again!.effects ?? (await store.effectsOf(conv, seq));
      [...journal.entries()].should.eql([
        ['s1:7:1', { k: 'slack.post', v: { ts: '1700000000.000200', channel: 'C1' } }],
        ['s1:7:2', { k: 'slack.post', v: { ts: '1700000000.000300', channel: 'C1' } }],
      ]);
      [...(await store.effectsOf(conv, seq)).keys()].should.eql(['s1:7:1', 's1:7:2']);
      await store.commit({ lease: again.lease, consumed: seq, journal: seq });
      (await store.effectsOf(conv, seq)).size.should.equal(0);
    });

    it('says an item was handed out before also when the worker takes it by `next`, and not when it only looks', async function () {
      await store.record({ ...conv, kind: 'message', payload: 1 });
      const { seq } = (await store.record({ ...conv, kind: 'message', payload: 2 })) as { seq: number };
      const claimed = (await store.claimNext(conv, 'me', 30_000))!;
      await store.commit({ lease: claimed.lease, consumed: claimed.item!.seq });
      // Looked at (a route asking whether something waits): not handed out.
      should((await store.next(conv))!.again).be.undefined();
      const taken = (await store.next(conv, true))!;
      taken.seq.should.equal(seq);
      should(taken.again).be.undefined();
      await store.release(claimed.lease);
      const again = (await store.claimNext(conv, 'me', 30_000))!;
      again.item!.seq.should.equal(seq);
      should(again.item!.again).be.an.Object();
    });

    it('refuses an outcome from a holder whose lease is gone', async function () {
      const { seq } = (await store.record({ ...conv, kind: 'message', payload: 1 })) as { seq: number };
      const claimed = (await store.claimNext(conv, 'me', 30_000))!;
      await store.release(claimed.lease);
      await store.recordEffect(claimed.lease, conv, seq, 's1:1:1', { k: 'x', v: 1 }).should.be.rejectedWith({ name: 'LeaseLost' });
      (await store.effectsOf(conv, seq)).size.should.equal(0);
    });

    it('drops the journal of an item left to run as a step of its own, which then runs as a first one', async function () {
      const { seq } = (await store.record({ ...conv, kind: 'message', payload: 1 })) as { seq: number };
      const claimed = (await store.claimNext(conv, 'me', 30_000))!;
      await store.recordEffect(claimed.lease, conv, seq, 's1:1:1', { k: 'x', v: 1 });
      await store.commit({ lease: claimed.lease, journal: seq });
      (await store.effectsOf(conv, seq)).size.should.equal(0);
      await store.release(claimed.lease);
      const again = (await store.claimNext(conv, 'me', 30_000))!;
      again.item!.seq.should.equal(seq);
      should(again.item!.again).be.undefined();
    });

    if (kind === 'SQLite') {
      it('takes an item a process that died left in its file as begun, with its journal', async function () {
        const { seq } = (await store.record({ ...conv, kind: 'message', payload: 1 })) as { seq: number };
        const claimed = (await store.claimNext(conv, 'me', 30_000))!;
        await store.recordEffect(claimed.lease, conv, seq, 's1:1:1', { k: 'twilio.message', v: { sid: 'SM1' } });
        await store.close();
        store = openSqlite();
        const again = (await store.claimNext(conv, 'me', 30_000))!;
        again.item!.seq.should.equal(seq);
        again.item!.again!.since.should.equal(again.item!.at);
        [...(await store.effectsOf(conv, seq)).values()].should.eql([{ k: 'twilio.message', v: { sid: 'SM1' } }]);
        // An item recorded since this open is a first hand-out.
        const { seq: later } = (await store.record({ ...conv, kind: 'message', payload: 2 })) as { seq: number };
        await store.commit({ lease: again.lease, consumed: seq });
        const next = (await store.next(conv, true))!;
        next.seq.should.equal(later);
        should(next.again).be.undefined();
      });
    }
  });
}
