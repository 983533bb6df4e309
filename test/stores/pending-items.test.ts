import should from 'should';

// The built package, as Node-RED loads it.
const { PendingItems } = require('../../../dist/stores/sqlite/pending-items.js');

const ref = (conversation: string) => ({ environment: 'env1', conversation });

/** The SQLite store's count of conversations with items waiting: never no when one waits, and bounded. */
describe('SQLite store: pending items counted', function () {
  it('counts at most its limit of conversations, and past it answers yes for those it does not count', function () {
    const pending = new PendingItems(2);
    pending.added(ref('a'));
    pending.added(ref('b'));
    should(pending.any(ref('c'))).be.false();
    pending.added(ref('c')); // not counted: the limit is reached
    should(pending.any(ref('c'))).be.true();
    pending.none(ref('c'));
    pending.consumed(ref('a'));
    should(pending.any(ref('a'))).be.true('unknown since the limit was passed: the worker reads');
    pending.load([{ environment: 'env1', conversation: 'b', n: 1 }]);
    should(pending.any(ref('a'))).be.false();
    should(pending.any(ref('b'))).be.true();
  });
});
