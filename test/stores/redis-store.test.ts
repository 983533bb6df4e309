import should from 'should';
import type { SessionRecord } from '../../src/model/session';
import { RedisServer } from '../harness/redis';
import { sessionRecord } from '../harness/store-records';

// The built package, as Node-RED loads it.

const redisContext = require('../../../redis-context.js');

const { LeaseLost, StoreUnavailable } = require('../../../dist/stores/session-store.js');

type Store = import('../../src/stores/redis/redis-store').RedisStore;

function quietLog() {
  const lines: string[] = [];
  return { lines, info: (l: string) => lines.push(l), warn: (l: string) => lines.push(l), error: (l: string) => lines.push(l) };
}

function session(id: string, conversation: string, props: Partial<SessionRecord> = {}): SessionRecord {
  return sessionRecord({ id, key: conversation, vars: { n: 1 }, ...props });
}

async function connected(store: Store): Promise<Store> {
  await store.whenConnected(5000);
  return store;
}

const conv = (conversation: string) => ({ environment: 'env1', conversation });

describe('the Redis Session store shared by two instances', function () {
  let redis: RedisServer;
  let a: Store;
  let b: Store;
  let prefix = 0;
  const log = quietLog();

  before(async function () {
    redis = await RedisServer.start();
  });
  after(async function () {
    await redis?.close();
  });
  beforeEach(async function () {
    // A fresh prefix per test: the stores of one test see nothing of another's.
    const config = { url: redis.url, prefix: `t${++prefix}:` };
    a = await connected(redisContext.sessionStoreFor(config, log));
    b = await connected(redisContext.sessionStoreFor({ ...config, url: `${redis.url}/0` }, log)); // a second connection, as another instance has
  });
  afterEach(async function () {
    await a.close();
    await b.close();
  });

  it('says what it is and that several instances may share it', function () {
    a.shared.should.be.true();
    a.durable.should.be.true();
    a.description.should.equal(`Redis at redis://127.0.0.1:${redis.port}, key prefix "t${prefix}:"`);
  });

  it('keeps what either instance recorded, in arrival order, per conversation', async function () {
    await a.record({ ...conv('c1'), kind: 'message', payload: { text: 'one' } });
    await b.record({ ...conv('c2'), kind: 'message', payload: { text: 'other' } });
    const second = await b.record({ ...conv('c1'), kind: 'message', payload: { text: 'two' } });
    const first = await a.next(conv('c1'));
    should(first!.payload).eql({ text: 'one' });
    first!.kind.should.equal('message');
    (await b.pending((second as { seq: number }).seq)).should.be.true();
    const lease = (await a.claim(conv('c1'), 'A', 5000))!;
    await a.commit({ lease, consumed: first!.seq });
    should((await b.next(conv('c1')))!.payload).eql({ text: 'two' });
    should((await b.next(conv('c2')))!.payload).eql({ text: 'other' });
  });

  it('records a message with a dedupe key once, whichever instance gets each copy', async function () {
    const results = await Promise.all(
      [a, b, a, b].map((s) => s.record({ ...conv('d'), kind: 'message', payload: {}, dedupe: { key: 'slack:Ev1', ttlMs: 60000 } })),
    );
    results.filter((r) => r === 'duplicate').length.should.equal(3);
    (await a.seen('slack:Ev1', 1000)).should.be.true();
    (await a.seen('other', 1000)).should.be.false();
    (await b.seen('other', 1000)).should.be.true();
  });

  it('gives a conversation to one holder at a time; the lease expires, and a stale holder cannot commit', async function () {
    await a.record({ ...conv('c'), kind: 'message', payload: {} });
    const item = (await a.next(conv('c')))!;
    const leaseA = (await a.claim(conv('c'), 'A', 200))!;
    should(await b.claim(conv('c'), 'B', 200)).be.undefined();
    (await a.orphans(10)).should.eql([]);
    await new Promise((r) => setTimeout(r, 300));
    (await a.renew(leaseA, 200)).should.be.false();
    (await b.orphans(10)).should.eql([conv('c')]);
    const leaseB = (await b.claim(conv('c'), 'B', 5000))!;
    leaseB.fence.should.be.above(leaseA.fence);
    await a.commit({ lease: leaseA, consumed: item.seq, session: session('s1', 'c') }).should.be.rejectedWith(LeaseLost);
    should(await b.liveSession(conv('c'))).be.undefined();
    (await b.pending(item.seq)).should.be.true();
    await a.release(leaseA); // a stale release leaves the new holder's lease alone
    should(await a.claim(conv('c'), 'A', 200)).be.undefined();
    (await b.renew(leaseB, 5000)).should.be.true();
    await b.commit({ lease: leaseB, consumed: item.seq, session: session('s1', 'c') });
    (await a.pending(item.seq)).should.be.false();
    await b.release(leaseB);
    (await a.claim(conv('c'), 'A', 200))!.fence.should.be.above(leaseB.fence);
  });

  it('lets an owner take its own lease again (its release failed while Redis was away), and finds such conversations for it', async function () {
    await a.record({ ...conv('own'), kind: 'message', payload: {} });
    const first = (await a.claim(conv('own'), 'A', 60000))!;
    (await b.orphans(10)).should.eql([]);
    (await b.orphans(10, 'B')).should.eql([]);
    (await a.orphans(10, 'A')).should.eql([conv('own')]);
    should(await b.claim(conv('own'), 'B', 60000)).be.undefined();
    const again = (await a.claim(conv('own'), 'A', 60000))!;
    again.fence.should.be.above(first.fence);
    await a.commit({ lease: first }).should.be.rejectedWith(LeaseLost);
    await a.commit({ lease: again, consumed: (await a.next(conv('own')))!.seq });
  });

  it('claims with the first item in one call, and lets go only when no item waits, whichever instance recorded it', async function () {
    should(await a.claimNext(conv('q'), 'A', 5000)).containDeep({ item: undefined });
    (await a.releaseIfIdle((await a.claim(conv('q'), 'A', 5000))!)).should.be.true();
    const one = await b.record({ ...conv('q'), kind: 'message', payload: { text: 'one' } });
    await b.record({ ...conv('q'), kind: 'message', payload: { text: 'two' } });
    const claimed = (await a.claimNext(conv('q'), 'A', 5000))!;
    should(claimed.item).containDeep({ seq: (one as { seq: number }).seq, kind: 'message', payload: { text: 'one' } });
    should(await b.claimNext(conv('q'), 'B', 5000)).be.undefined();
    await a.commit({ lease: claimed.lease, consumed: claimed.item!.seq });
    (await a.releaseIfIdle(claimed.lease)).should.be.false(); // 'two' waits: the lease is kept
    should(await b.claim(conv('q'), 'B', 5000)).be.undefined();
    await a.commit({ lease: claimed.lease, consumed: (await a.next(conv('q')))!.seq });
    (await a.releaseIfIdle(claimed.lease)).should.be.true();
    const taken = (await b.claimNext(conv('q'), 'B', 200))!;
    taken.lease.fence.should.be.above(claimed.lease.fence);
    should(taken.item).be.undefined();
    await b.record({ ...conv('q'), kind: 'message', payload: { text: 'three' } });
    await new Promise((r) => setTimeout(r, 300)); // B's lease expires with 'three' waiting
    const after = (await a.claimNext(conv('q'), 'A', 5000))!;
    should(after.item!.payload).eql({ text: 'three' });
    (await b.releaseIfIdle(taken.lease)).should.be.true(); // stale: nothing of B's left to let go
    should(await b.claim(conv('q'), 'B', 5000)).be.undefined(); // A's new lease stands
    await b.commit({ lease: taken.lease, consumed: after.item!.seq }).should.be.rejectedWith(LeaseLost);
  });

  it("hands over the conversation's live Session with its first item, as the step will see it", async function () {
    await b.record({ ...conv('l'), kind: 'message', payload: 1 });
    const first = (await a.claimNext(conv('l'), 'A', 5000))!;
    should(first.live).eql({ session: undefined });
    await a.commit({ lease: first.lease, consumed: first.item!.seq, session: session('s-l', 'l', { vars: { n: 2 } }) });
    (await a.releaseIfIdle(first.lease)).should.be.true();
    should((await a.claimNext(conv('l'), 'A', 5000))!.live).be.undefined(); // no item: no step, nothing read
    await a.release((await a.claim(conv('l'), 'A', 5000))!);
    await b.record({ ...conv('l'), kind: 'message', payload: 2 });
    const second = (await b.claimNext(conv('l'), 'B', 5000))!;
    should(second.live!.session).containDeep({ id: 's-l', key: 'l', vars: { n: 2 } });
    should(second.live!.session).eql(await b.liveSession(conv('l')));
  });

  it('sets an unreadable first item aside when claiming, and hands over the next', async function () {
    const first = (await a.record({ ...conv('u'), kind: 'message', payload: 1 })) as { seq: number };
    await a.record({ ...conv('u'), kind: 'message', payload: 2 });
    await redis.command('HSET', `t${prefix}:s:items`, String(first.seq), 'not json');
    should((await b.claimNext(conv('u'), 'B', 5000))!.item!.payload).equal(2);
    (await redis.command('LLEN', `t${prefix}:s:aside`)).should.equal(':1');
  });

  it('sets aside an item edited by hand into JSON of the wrong shape, naming what is wrong, and hands over the next', async function () {
    const shapes = ['"just text"', '[1,2]', '{"v":1,"kind":5,"payload":{},"at":1}', '{"v":1,"kind":"message","payload":{},"at":"soon"}'];
    for (const shape of shapes) {
      const first = (await a.record({ ...conv('w'), kind: 'message', payload: 1 })) as { seq: number };
      await a.record({ ...conv('w'), kind: 'message', payload: 2 });
      await redis.command('HSET', `t${prefix}:s:items`, String(first.seq), shape);
      const claimed = (await b.claimNext(conv('w'), 'B', 5000))!;
      should(claimed.item).containEql({ kind: 'message', payload: 2 });
      await b.commit({ lease: claimed.lease, consumed: claimed.item!.seq });
      await b.release(claimed.lease);
    }
    (await redis.command('LLEN', `t${prefix}:s:aside`)).should.equal(`:${shapes.length}`);
    log.lines
      .filter((l) => /inbound item \d+ in Redis at .* is unreadable: (not an object|kind is not text|at is not a time)/.test(l))
      .length.should.equal(shapes.length);
  });

  it('commits the next step of a Session whose index entry was edited by hand into what is not its shape, and indexes it anew', async function () {
    const lease = (await a.claim(conv('x'), 'A', 5000))!;
    const s = session('sx', 'x');
    await a.commit({ lease, session: s, timers: [{ kind: 'timeout', due: Date.now() + 60000, payload: { node: 'ask' } }] });
    for (const broken of ['not json', '"text"', '{"env":"env1"}']) {
      await redis.command('HSET', `t${prefix}:s:where`, 'sx', broken);
      const next = session('sx', 'x', { waitingAt: { nodeId: 'later', nodeType: 'input-task', since: 3 } });
      await a.commit({ lease, session: next });
      (await b.liveSession(conv('x')))!.waitingAt!.nodeId.should.equal('later');
      (await b.list({ waitingAt: ['later'], limit: 10 })).map((x: SessionRecord) => x.id).should.containEql('sx');
      (await redis.command('HGET', `t${prefix}:s:where`, 'sx')).should.match(/"node":"later"/);
    }
    // Ended, it leaves the store as any Session does.
    await a.commit({ lease, session: { ...session('sx', 'x'), state: 'completed' } });
    should(await b.liveSession(conv('x'))).be.undefined();
  });

  it('commits a step whole: the item consumed, the Session, its index entries and its timers', async function () {
    await a.record({ ...conv('c'), kind: 'message', payload: { text: 'hi' } });
    const item = (await a.next(conv('c')))!;
    const lease = (await a.claim(conv('c'), 'A', 5000))!;
    const s = session('s1', 'c');
    await a.commit({
      lease,
      consumed: item.seq,
      session: s,
      timers: [{ kind: 'timeout', due: Date.now() + 60000, payload: { node: 'ask' } }],
      marks: [{ key: 'm1', ttlMs: 60000 }],
    });
    (await b.liveSession(conv('c')))!.should.eql(s);
    (await b.sessionById('s1'))!.vars.should.eql({ n: 1 });
    (await b.count({})).should.equal(1);
    (await b.count({ environment: 'env1' })).should.equal(1);
    (await b.count({ environment: 'other' })).should.equal(0);
    [...(await b.waitingByNode())].should.eql([['ask', 1]]);
    (await b.list({ waitingAt: ['ask'], limit: 10 })).map((x: SessionRecord) => x.id).should.eql(['s1']);
    (await b.list({ limit: 10 })).map((x: SessionRecord) => x.id).should.eql(['s1']);
    (await b.seen('m1', 1000)).should.be.true();
    should(await b.next(conv('c'))).be.undefined();

    // A newer Session of the same conversation replaces the old one; an ended one is removed.
    const s2 = session('s2', 'c', { waitingAt: { nodeId: 'other', nodeType: 'input-task', since: 2 } });
    await a.commit({ lease, session: s2 });
    should(await b.sessionById('s1')).be.undefined();
    (await b.liveSession(conv('c')))!.id.should.equal('s2');
    [...(await b.waitingByNode())].should.eql([['other', 1]]);
    await a.commit({ lease, session: { ...s2, state: 'completed' } });
    should(await b.liveSession(conv('c'))).be.undefined();
    (await b.count({})).should.equal(0);
    (await b.waitingByNode()).size.should.equal(0);
    (await b.takeDueTimers(Date.now() + 120000, 10)).should.eql([]); // the ended Session's timer went with it
  });

  it('lists the newest activity first, by Environment and by waiting node', async function () {
    const lease = (await a.claim(conv('x'), 'A', 5000))!;
    for (let i = 0; i < 5; i++) {
      await a.commit({
        lease,
        session: session(`s${i}`, `c${i}`, {
          lastActivity: 1000 + i,
          environment: i % 2 ? 'env2' : 'env1',
          waitingAt: { nodeId: i < 3 ? 'n1' : 'n2', nodeType: 'input-task', since: 1 },
        }),
      });
    }
    (await b.list({ limit: 3 })).map((x: SessionRecord) => x.id).should.eql(['s4', 's3', 's2']);
    (await b.list({ environment: 'env2', limit: 10 })).map((x: SessionRecord) => x.id).should.eql(['s3', 's1']);
    (await b.list({ waitingAt: ['n1', 'n2'], limit: 10 })).map((x: SessionRecord) => x.id).should.eql(['s4', 's3', 's2', 's1', 's0']);
    (await b.list({ waitingAt: ['n1'], environment: 'env1', limit: 10 })).map((x: SessionRecord) => x.id).should.eql(['s2', 's0']);
    (await b.list({ waitingAt: [], limit: 10 })).should.eql([]);
  });

  it('moves each due timer into its conversation exactly once, with both instances sweeping', async function () {
    const lease = (await a.claim(conv('x'), 'A', 5000))!;
    const now = Date.now();
    for (let i = 0; i < 50; i++) {
      await a.commit({
        lease,
        session: session(`t${i}`, `tc${i}`),
        timers: [
          { kind: 'timeout', due: now - 10 - i, payload: { i } },
          { kind: 'expire', due: now + 3_600_000, payload: null },
        ],
      });
    }
    const taken = (await Promise.all([a, b, a, b, a, b].map((s) => s.takeDueTimers(now, 7)))).flat();
    const again = [...(await a.takeDueTimers(now, 100)), ...(await b.takeDueTimers(now, 100))];
    const all = [...taken, ...again].map((r) => r.conversation).sort();
    all.should.eql(Array.from({ length: 50 }, (_, i) => `tc${i}`).sort());
    const item = (await b.next(conv('tc7')))!;
    item.kind.should.equal('timeout');
    should(item.payload).eql({ sessionId: 't7', due: now - 17, wait: { i: 7 } });
    // Re-arming replaces the Session's timers, so an old one never fires after a new step.
    await a.commit({ lease, session: session('t8', 'tc8'), timers: [{ kind: 'timeout', due: now + 3_600_000, payload: null }] });
    (await a.takeDueTimers(now + 3_600_000, 200)).length.should.equal(50);
    // The commit script writes the timer's item itself: a conversation and a wait that JSON must escape come back whole.
    const odd = 'tc "quoted" \\ / é 💬';
    await a.commit({ lease, session: session('t99', odd), timers: [{ kind: 'expire', due: now - 1, payload: { said: 'a "b" \\ c' } }] });
    (await b.takeDueTimers(now, 10)).should.eql([conv(odd)]);
    const expired = (await b.next(conv(odd)))!;
    expired.kind.should.equal('expire');
    should(expired.payload).eql({ sessionId: 't99', due: now - 1, wait: { said: 'a "b" \\ c' } });
  });

  it('sets aside a malformed Session and an unreadable message instead of wedging the conversation', async function () {
    await redis.command('HSET', `t${prefix}:s:sessions`, 'bad', '{"id":"bad"}');
    await redis.command('HSET', `t${prefix}:s:live`, JSON.stringify(['env1', 'c']), 'bad');
    should(await a.liveSession(conv('c'))).be.undefined();
    log.lines.some((l) => /Session bad .* is malformed \(channel is missing or not text\); set aside/.test(l)).should.be.true();
    (await redis.command('LLEN', `t${prefix}:s:aside`)).should.equal(':1');
    await a.record({ ...conv('c'), kind: 'message', payload: 1 });
    await a.record({ ...conv('c'), kind: 'message', payload: 2 });
    const first = (await a.next(conv('c')))!;
    await redis.command('HSET', `t${prefix}:s:items`, String(first.seq), 'not json');
    should((await a.next(conv('c')))!.payload).equal(2);
    (await redis.command('LLEN', `t${prefix}:s:aside`)).should.equal(':2');
  });

  describe('when Redis goes away', function () {
    it('refuses with StoreUnavailable at once, and works again when Redis is back, without a new store', async function () {
      this.timeout(20000);
      await a.record({ ...conv('r'), kind: 'message', payload: { kept: true } });
      await redis.stop();
      const started = Date.now();
      await a.record({ ...conv('r'), kind: 'message', payload: {} }).should.be.rejectedWith(StoreUnavailable);
      await b.next(conv('r')).should.be.rejectedWith(StoreUnavailable, { message: /could not read a conversation/ });
      (Date.now() - started).should.be.below(1000);
      a.available.should.be.false();
      await redis.start();
      const deadline = Date.now() + 10000;
      while (!(a.available && b.available) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      should((await b.next(conv('r')))!.payload).eql({ kept: true });
      (await a.record({ ...conv('r'), kind: 'message', payload: {} })).should.have.property('seq');
      log.lines.filter((l) => /is unavailable/.test(l)).length.should.be.above(0);
      log.lines.filter((l) => /is available again/.test(l)).length.should.be.above(0);
    });
  });
});

describe('two runtimes in one process, each with a Redis Session store on the same URL and prefix', function () {
  let redis: RedisServer;
  before(async function () {
    redis = await RedisServer.start();
  });
  after(async function () {
    await redis?.close();
  });

  it('answers its first commands as soon as it has connected, each logs to its own runtime, and closing one leaves the other working', async function () {
    this.timeout(20000);
    const config = { url: redis.url, prefix: 'two-runtimes:' };
    const [logA, logB] = [quietLog(), quietLog()];
    const a: Store = redisContext.sessionStoreFor(config, logA);
    // At once, as a deploy's sweep does: it waits for the connection instead of being refused.
    (await a.record({ ...conv('x'), kind: 'message', payload: { n: 1 } })).should.have.property('seq');
    const b: Store = redisContext.sessionStoreFor(config, logB);
    should((await b.next(conv('x')))!.payload).eql({ n: 1 });
    await redis.stop();
    try {
      await a.record({ ...conv('x'), kind: 'message', payload: {} }).should.be.rejectedWith(StoreUnavailable);
      await b.record({ ...conv('x'), kind: 'message', payload: {} }).should.be.rejectedWith(StoreUnavailable);
      for (const log of [logA, logB])
        log.lines.filter((l) => /Redis at redis:\/\/127\.0\.0\.1:\d+ is unavailable/.test(l)).length.should.equal(1, log.lines.join('\n'));
    } finally {
      await redis.start();
    }
    const deadline = Date.now() + 10000;
    while (!(a.available && b.available) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    for (const log of [logA, logB]) log.lines.filter((l) => /is available again/.test(l)).length.should.equal(1, log.lines.join('\n'));
    await b.close();
    should((await a.next(conv('x')))!.payload).eql({ n: 1 });
    await a.close();
  });
});

describe('the Redis Session store with credentials', function () {
  it('connects as an ACL user and never writes the password into an error or a log line', async function () {
    this.timeout(20000);
    const redis = await RedisServer.start({ aclUser: { name: 'flows', password: 'pa55-w0rd-secret' } });
    const log = quietLog();
    const store: Store = await connected(redisContext.sessionStoreFor({ url: redis.url }, log));
    try {
      store.description.should.equal(`Redis at redis://127.0.0.1:${redis.port}, key prefix "channel-sessions:"`);
      (await store.record({ ...conv('c'), kind: 'message', payload: {} })).should.have.property('seq');
      (await redis.command('EXISTS', 'channel-sessions:s:items')).should.equal(':1');
      await redis.stop();
      const err = await store.record({ ...conv('c'), kind: 'message', payload: {} }).then(
        () => undefined,
        (e: Error) => e,
      );
      should(err).be.instanceOf(StoreUnavailable);
      err!.message.should.not.match(/pa55-w0rd-secret|flows/);
      await redis.start();
      await new Promise((r) => setTimeout(r, 300));
    } finally {
      await store.close();
      await redis.close();
    }
    log.lines.length.should.be.above(0);
    for (const line of log.lines) line.should.not.match(/pa55-w0rd-secret/);
  });

  it('logs a wrong password as unavailable, without the password', async function () {
    this.timeout(20000);
    const redis = await RedisServer.start({ password: 'right-one' });
    const log = quietLog();
    const store: Store = redisContext.sessionStoreFor({ url: redis.url.replace('right-one', 'wrong-one') }, log);
    (await store.whenConnected(1000)).should.be.false();
    try {
      await store.record({ ...conv('c'), kind: 'message', payload: {} }).should.be.rejectedWith(StoreUnavailable);
    } finally {
      await store.close();
      await redis.close();
    }
    log.lines
      .join('\n')
      .should.match(/unavailable/)
      .and.not.match(/wrong-one/);
  });

  it('takes the user and password out of a message that quotes them, also a password whose escapes do not decode', function () {
    const { redact } = require('../../../dist/stores/redis/config.js') as { redact: (message: string, url: string) => string };
    const broken = 'redis://flows:pa55%zz-secret@127.0.0.1:6379';
    redact(`could not reach ${broken}`, broken).should.equal('could not reach redis://***:***@127.0.0.1:6379');
    const escaped = 'redis://flows:pa55%40secret@127.0.0.1:6379';
    redact('AUTH flows pa55@secret refused (pa55%40secret)', escaped).should.equal('AUTH *** *** refused (***)');
  });

  it('refuses a URL that is not redis:// or rediss://, naming the problem and not the password', function () {
    (() => redisContext({ url: 'http://u:secret@127.0.0.1:6379' })).should.throw(/must start with redis:\/\/ or rediss:\/\/, not http:/);
    (() => redisContext({})).should.throw(/needs config.url/);
    (() => redisContext({ url: 'redis://h', prefix: 3 })).should.throw(/prefix must be text/);
    try {
      redisContext({ url: 'http://u:secret@127.0.0.1:6379' });
    } catch (err) {
      (err as Error).message.should.not.match(/secret/);
    }
  });
});
