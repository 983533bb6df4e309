import should from 'should';
import type { SessionRecord } from '../../src/model/session';
import { RedisServer } from '../harness/redis';
import { RespCounter } from '../harness/resp-counter';
import { sessionRecord } from '../harness/store-records';

// The built package, as Node-RED loads it.

const redisContext = require('../../../redis-context.js');

const { LeaseLost } = require('../../../dist/stores/session-store.js');

const { KnownCopies } = require('../../../dist/stores/redis/known-copies.js') as {
  KnownCopies: typeof import('../../src/stores/redis/known-copies').KnownCopies;
};

type Store = import('../../src/stores/redis/redis-store').RedisStore;

const log = { info: () => undefined, warn: () => undefined, error: () => undefined };
const conv = (conversation: string) => ({ environment: 'env1', conversation });
const waiting = (id: string, conversation: string, vars: Record<string, unknown>): SessionRecord => sessionRecord({ id, key: conversation, vars });

/**
 * On one instance, the item and the Session a claim reads are the ones that instance wrote a moment
 * before: the claim does not bring them back over the network. They come back whole whenever Redis
 * holds something else (another instance, an older version or a person changed them). A step's
 * commit can let go of the conversation in the same call when nothing else waits.
 */
describe('the Redis store brings back only what changed since this instance wrote it', function () {
  let redis: RedisServer;
  let relay: RespCounter;
  let prefix = 0;
  /** `a` talks to Redis through the counting relay; `b` is another instance, straight to Redis. */
  let a: Store;
  let b: Store;

  before(async function () {
    redis = await RedisServer.start();
    relay = new RespCounter(redis.port);
    await relay.listen();
  });
  after(async function () {
    await relay?.close();
    await redis?.close();
  });
  beforeEach(async function () {
    const config = { prefix: `k${++prefix}:` };
    a = redisContext.sessionStoreFor({ ...config, url: `redis://127.0.0.1:${relay.port}` }, log);
    b = redisContext.sessionStoreFor({ ...config, url: redis.url }, log);
    await a.whenConnected(5000);
    await b.whenConnected(5000);
  });
  afterEach(async function () {
    await a.close();
    await b.close();
  });

  /** The bytes Redis sent `a` while `work` ran. */
  async function bytesBack<T>(work: () => Promise<T>): Promise<{ value: T; bytes: number }> {
    const before = relay.bytesFromRedis;
    const value = await work();
    return { value, bytes: relay.bytesFromRedis - before };
  }

  /** A first step in conversation `c` by `a`: the Session it opens waits, with a large variable. */
  async function opened(c: string): Promise<SessionRecord> {
    const session = waiting(`s-${c}`, c, { big: 'x'.repeat(2000), n: 1 });
    const { seq } = (await a.record({ ...conv(c), kind: 'message', payload: { text: 'hello' } })) as { seq: number };
    const { lease } = (await a.claimNext(conv(c), 'A', 5000))!;
    (await a.commit({ lease, consumed: seq, session, releaseIfIdle: true }))!.should.equal('released');
    return session;
  }

  it('claims the item and the Session it wrote itself without their texts coming back, and reads them as written', async function () {
    const session = await opened('c1');
    const payload = { text: 'y'.repeat(2000) };
    const { seq } = (await a.record({ ...conv('c1'), kind: 'message', payload })) as { seq: number };
    const { value: claimed, bytes } = await bytesBack(() => a.claimNext(conv('c1'), 'A', 5000));
    bytes.should.be.below(200); // the item and the record are over 2,000 bytes each
    should(claimed!.item).containDeep({ seq, kind: 'message', payload });
    should(claimed!.live!.session).eql(session);
    // As another instance reads them: the same texts.
    should(await b.liveSession(conv('c1'))).eql(claimed!.live!.session);
  });

  it('brings back whole what another instance wrote since', async function () {
    await opened('c2');
    await b.record({ ...conv('c2'), kind: 'message', payload: 2 });
    const taken = (await b.claimNext(conv('c2'), 'B', 5000))!;
    await b.commit({ lease: taken.lease, consumed: taken.item!.seq, session: waiting('s-c2', 'c2', { n: 2 }), releaseIfIdle: true });
    const { seq } = (await b.record({ ...conv('c2'), kind: 'message', payload: { from: 'b' } })) as { seq: number };
    const { value: claimed, bytes } = await bytesBack(() => a.claimNext(conv('c2'), 'A', 5000));
    should(claimed!.item).containDeep({ seq, payload: { from: 'b' } });
    should(claimed!.live!.session).containDeep({ id: 's-c2', vars: { n: 2 } });
    should(claimed!.live!.session!.vars).not.have.property('big');
    bytes.should.be.above(100);
  });

  it('brings back whole a record changed in Redis by other means, and the next item when the one it wrote is gone', async function () {
    await opened('c3');
    const id = (await redis.command('HGET', `k${prefix}:s:live`, JSON.stringify(['env1', 'c3']))).split('\n').pop()!;
    id.should.equal('s-c3');
    const edited = waiting('s-c3', 'c3', { n: 'edited by hand' });
    await redis.command('HSET', `k${prefix}:s:sessions`, 's-c3', JSON.stringify(edited));
    const first = (await a.record({ ...conv('c3'), kind: 'message', payload: 'first' })) as { seq: number };
    await a.record({ ...conv('c3'), kind: 'message', payload: 'second' }); // a holds this one, not the first
    const claimed = (await a.claimNext(conv('c3'), 'A', 5000))!;
    should(claimed.live!.session).eql(edited);
    should(claimed.item).containDeep({ seq: first.seq, payload: 'first' });
  });

  it('lets go in the commit only when no item waits, and a commit tried again after its reply was lost is done, not refused', async function () {
    await opened('c4');
    await a.record({ ...conv('c4'), kind: 'message', payload: 1 });
    let claimed = (await a.claimNext(conv('c4'), 'A', 5000))!;
    await b.record({ ...conv('c4'), kind: 'message', payload: 2 });
    const step = { lease: claimed.lease, consumed: claimed.item!.seq, session: waiting('s-c4', 'c4', { n: 2 }), releaseIfIdle: true };
    should(await a.commit(step)).equal('kept'); // 2 waits: the lease is kept
    should(await b.claim(conv('c4'), 'B', 5000)).be.undefined();
    claimed = (await a.claimNext(conv('c4'), 'A', 5000))!;
    const last = { lease: claimed.lease, consumed: claimed.item!.seq, session: waiting('s-c4', 'c4', { n: 3 }), releaseIfIdle: true };
    (await a.commit(last))!.should.equal('released');
    (await a.commit(last))!.should.equal('released'); // the same commit again: already done
    // Once another holder changed the Session, the same commit again is refused.
    const other = (await b.claim(conv('c4'), 'B', 5000))!;
    await b.commit({ lease: other, session: waiting('s-c4', 'c4', { n: 'b' }) });
    await a.commit(last).should.be.rejectedWith(LeaseLost);
    // Without the release asked for, a commit on a lease let go is refused as before.
    await a.commit({ ...last, releaseIfIdle: false }).should.be.rejectedWith(LeaseLost);
  });

  it('forgets everything at once past its number of conversations, and keeps what came after', function () {
    const known = new KnownCopies(2);
    known.recordWritten('one', '{"a":1}');
    known.itemRecorded('two', 5, '{}');
    known.recordWritten('one', '{"a":2}'); // the same conversation again: still two
    known.size.should.equal(2);
    should(known.get('one')!.record!.text).equal('{"a":2}');
    known.itemRecorded('three', 6, '{}'); // a third: the first two are forgotten
    known.size.should.equal(1);
    should(known.get('one')).be.undefined();
    should(known.get('two')).be.undefined();
    known.get('three')!.item!.should.eql({ seq: '6', text: '{}' });
    known.kept.should.equal(2);
  });

  it('forgets everything at once past its characters, counts a replaced text once, and keeps no text too long to be worth it', function () {
    const known = new KnownCopies(100, 25);
    known.recordWritten('one', 'a'.repeat(10));
    known.itemRecorded('two', 1, 'b'.repeat(10));
    known.kept.should.equal(20);
    known.itemRecorded('two', 2, 'c'.repeat(8)); // replaced, not added
    known.kept.should.equal(18);
    known.recordWritten('three', 'd'.repeat(10)); // 28 > 25: all forgotten, then kept
    should(known.get('one')).be.undefined();
    should(known.get('two')).be.undefined();
    known.kept.should.equal(10);
    known.forgetRecord('three');
    known.kept.should.equal(0);
    const big = new KnownCopies();
    big.recordWritten('huge', 'x'.repeat(300 * 1024));
    should(big.get('huge')).be.undefined();
    big.kept.should.equal(0);
  });
});
