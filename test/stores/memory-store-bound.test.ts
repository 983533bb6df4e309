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
