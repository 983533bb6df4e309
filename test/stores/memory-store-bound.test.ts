import should from 'should';
import type { MemoryStore as MemoryStoreType } from '../../src/stores/memory/memory-store';

// The built package, as Node-RED loads it.
const { MemoryStore, WAITING_ITEMS_MAX } = require('../../../dist/stores/memory/memory-store.js') as {
  MemoryStore: typeof MemoryStoreType;
  WAITING_ITEMS_MAX: number;
};

const conv = (conversation: string) => ({ environment: 'env1', conversation });

/**
 * The in-process store keeps received messages in memory until their steps run. While steps
 * cannot run (the flows stopped), that must not grow without end: past its bound a new message is
 * refused as a store that cannot take it is (StoreUnavailable: the webhook answers 503 and the
 * provider retries), and taken again once steps have handled some.
 */
describe('the in-process Session store keeps a bounded number of messages not yet handled', function () {
  it('refuses a message past the bound with StoreUnavailable, leaves its dedupe key free, and takes messages again once one is handled', async function () {
    const store = new MemoryStore('memory, copied to context store "memory"');
    for (let i = 0; i < WAITING_ITEMS_MAX; i++) await store.record({ ...conv(`c${i % 50}`), kind: 'message', payload: i });

    const refused = await store.record({ ...conv('late'), kind: 'message', payload: 'late', dedupe: { key: 'late-1', ttlMs: 60_000 } }).then(
      () => undefined,
      (err: Error) => err,
    );
    should(refused).be.an.Error();
    should(refused!.name).equal('StoreUnavailable');
    should(refused!.message).equal(
      `the Session store (memory, copied to context store "memory") holds ${WAITING_ITEMS_MAX} received messages not yet handled; new ones are refused until steps handle them`,
    );
    should(await store.next(conv('late'))).be.undefined();

    // A step handles one message: there is room again, and the refused message, sent again, is taken (not a duplicate).
    const claimed = (await store.claimNext(conv('c0'), 'me'))!;
    should(claimed.item).containDeep({ payload: 0 });
    await store.commit({ lease: claimed.lease, consumed: claimed.item!.seq });
    const again = await store.record({ ...conv('late'), kind: 'message', payload: 'late', dedupe: { key: 'late-1', ttlMs: 60_000 } });
    should(again).have.property('seq');
    should(await store.next(conv('late'))).containDeep({ payload: 'late' });
    await store.record({ ...conv('later'), kind: 'message', payload: 'later' }).then(
      () => should.fail(undefined, undefined, 'a message past the bound was taken'),
      (err: Error) => should(err.name).equal('StoreUnavailable'),
    );
  });
});

/**
 * Effect outcomes are kept only for steps in progress or cut, and at most EFFECTS_MAX of them: a
 * step that sends without end (a flow looping on a reply) does not grow the process past it; the
 * outcomes past the bound are not kept (a deploy cut would send those again), and a commit frees
 * its step's.
 */
describe('the in-process Session store keeps a bounded number of effect outcomes', function () {
  it('keeps no more than EFFECTS_MAX outcomes, and a commit frees its step’s', async function () {
    const { EFFECTS_MAX } = require('../../../dist/stores/memory/memory-store.js') as { EFFECTS_MAX: number };
    const store = new MemoryStore('memory');
    const { seq } = (await store.record({ ...conv('loop'), kind: 'message', payload: 'go' })) as { seq: number };
    const { lease } = (await store.claimNext(conv('loop'), 'me'))!;
    for (let i = 1; i <= EFFECTS_MAX + 10; i++)
      await store.recordEffect(lease, conv('loop'), seq, `s:${seq}:${i}`, { k: 'twilio.message', v: { sid: `SM${i}` } });
    const journal = await store.effectsOf(conv('loop'), seq);
    journal.size.should.equal(EFFECTS_MAX);
    should(journal.get(`s:${seq}:${EFFECTS_MAX + 1}`)).be.undefined();
    await store.commit({ lease, consumed: seq });
    (await store.effectsOf(conv('loop'), seq)).size.should.equal(0);
    // Room again for the next step's.
    const { seq: next } = (await store.record({ ...conv('loop'), kind: 'message', payload: 'again' })) as { seq: number };
    await store.recordEffect(lease, conv('loop'), next, `s:${next}:1`, { k: 'twilio.message', v: { sid: 'SMx' } });
    (await store.effectsOf(conv('loop'), next)).size.should.equal(1);
  });
});
