import should from 'should';

// The built package, as Node-RED loads it.

const { RecentKeys } = require('../../../dist/stores/recent-keys.js');

type Keys = import('../../src/stores/recent-keys').RecentKeys;

/**
 * The dedupe memory of the in-process Session store (a Twilio MessageSid, a Slack event id): a key
 * is remembered for its time to live, and past the bound the key remembered longest ago goes first.
 */
describe('recent keys (redelivered webhooks)', function () {
  let now: number;
  const realNow = Date.now;
  beforeEach(function () {
    now = 1_000_000;
    Date.now = () => now;
  });
  afterEach(function () {
    Date.now = realNow;
  });

  it('says a key was seen within its time to live, and not after', function () {
    const keys: Keys = new RecentKeys(Number.POSITIVE_INFINITY, 10);
    should(keys.seen('SM1', 100)).be.false();
    now += 100;
    should(keys.seen('SM1', 100)).be.true();
    now += 1;
    should(keys.seen('SM1', 100)).be.false(); // expired: remembered afresh
    should(keys.seen('SM1', 100)).be.true();
  });

  it('lets the key remembered longest ago go first, a key remembered again counting from then', function () {
    const keys: Keys = new RecentKeys(Number.POSITIVE_INFINITY, 3);
    for (const key of ['a', 'b', 'c']) keys.seen(key, 1_000_000);
    keys.seen('x', 10); // 'a' goes
    should(keys.seen('a', 1_000_000)).be.false(); // 'b' goes: c, x, a
    now += 20;
    should(keys.seen('x', 1_000_000)).be.false(); // expired, remembered again: c, a, x
    should(keys.seen('d', 1_000_000)).be.false(); // 'c' goes: a, x, d
    should(keys.seen('e', 1_000_000)).be.false(); // 'a' goes, not 'x': x, d, e
    should([keys.seen('x', 1), keys.seen('d', 1), keys.seen('e', 1)]).eql([true, true, true]);
    should(keys.seen('c', 1_000_000)).be.false();
    should(keys.seen('a', 1_000_000)).be.false();
  });

  it('keeps its bound through many keys, each redelivery within the bound still caught', function () {
    const keys: Keys = new RecentKeys(Number.POSITIVE_INFINITY, 1000);
    for (let i = 0; i < 50_000; i++) {
      should(keys.seen(`SM${i}`, 86_400_000)).be.false();
      if (i >= 999) should(keys.seen(`SM${i - 999}`, 86_400_000)).be.true(); // the oldest kept
    }
    should(keys.seen('SM48999', 86_400_000)).be.false(); // the 1,001st newest is gone
  });
});
