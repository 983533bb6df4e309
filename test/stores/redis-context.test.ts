import 'should';
import { node, tab } from '../harness/flows';
import { NodeRed } from '../harness/node-red';
import { RedisServer, redisContextSettings } from '../harness/redis';

/** HTTP routes whose function nodes use the `shared` store the way flows do (async form). */
function contextFlow() {
  const z = 'ctx';
  const route = (id: string, url: string, func: string) => [
    node('http in', `${id}-in`, z, { url, method: 'get' }, [[`${id}-fn`]]),
    node('function', `${id}-fn`, z, { func, outputs: 1 }, [[`${id}-out`]]),
    node('http response', `${id}-out`, z, {}),
  ];
  return [
    tab(z, 'context'),
    ...route(
      'set',
      '/ctx/set',
      `const q = msg.req.query;
global.set(q.k, JSON.parse(q.v), 'shared', (err) => { msg.payload = err ? { error: err.message } : { ok: true }; node.send(msg); });`,
    ),
    ...route(
      'get',
      '/ctx/get',
      `global.get(msg.req.query.k.split(','), 'shared', (err, ...values) => {
  msg.payload = err ? { error: err.message } : { values: values.map((v) => v === undefined ? null : v) }; node.send(msg); });`,
    ),
    ...route(
      'keys',
      '/ctx/keys',
      `global.keys('shared', (err, keys) => { msg.payload = err ? { error: err.message } : { keys: keys.sort() }; node.send(msg); });`,
    ),
    ...route(
      'flow',
      '/ctx/flow',
      `flow.set('visits', (msg.req.query.n | 0), 'shared', () => flow.get('visits', 'shared', (err, v) => { msg.payload = { visits: v }; node.send(msg); }));`,
    ),
    ...route(
      'sync',
      '/ctx/sync',
      `try { msg.payload = { value: global.get('a', 'shared') }; } catch (err) { msg.payload = { error: err.message }; } return msg;`,
    ),
  ];
}

describe('the redis-context store in Node-RED', function () {
  this.timeout(60000);
  let redis: RedisServer;
  const reds: NodeRed[] = [];

  before(async function () {
    redis = await RedisServer.start({ aclUser: { name: 'nodered', password: 'ctx-pa55word' } });
    for (let i = 0; i < 2; i++) reds.push(await NodeRed.start({ settingsCode: redisContextSettings(redis.url) }));
    for (const red of reds) await red.deploy(contextFlow());
  });
  after(async function () {
    for (const red of reds) await red.close();
    await redis?.close();
  });

  const call = async (red: NodeRed, path: string) => (await red.request('GET', path)).body;

  it('loads from settings.js by its package path, named without its URL', function () {
    for (const red of reds) {
      red.logs.some((l) => /Context store\s+: 'shared' \[module=channel-sessions redis-context\]/.test(l)).should.be.true(red.logs.join('\n'));
    }
  });

  it('shares global context between instances: what one sets, the other reads', async function () {
    (await call(reds[0], `/ctx/set?k=a&v=${encodeURIComponent('{"n":1,"list":[1,2]}')}`)).should.eql({ ok: true });
    (await call(reds[1], '/ctx/get?k=a,a.n,a.list[1],missing')).should.eql({ values: [{ n: 1, list: [1, 2] }, 1, 2, null] });
    (await call(reds[1], '/ctx/set?k=a.n&v=5')).should.eql({ ok: true });
    (await call(reds[0], '/ctx/get?k=a')).should.eql({ values: [{ n: 5, list: [1, 2] }] });
    (await call(reds[0], '/ctx/set?k=b&v=%22text%22')).should.eql({ ok: true });
    (await call(reds[1], '/ctx/keys')).should.eql({ keys: ['a', 'b'] });
  });

  it('keeps flow context per flow, in Redis', async function () {
    (await call(reds[0], '/ctx/flow?n=3')).should.eql({ visits: 3 });
    (await redis.command('HGET', 'channel-sessions:c:ctx', 'visits')).should.match(/3/);
  });

  it('a value edited by hand into what is not JSON: reading it is an error naming the key, a nested set leaves it, the other keys work', async function () {
    await redis.command('HSET', 'channel-sessions:c:global', 'edited', '{"n": 1, oops');
    (await call(reds[0], '/ctx/get?k=edited.n')).error.should.match(/Redis at redis:\/\/127\.0\.0\.1:\d+: the value of edited \(global\) is not JSON/);
    (await call(reds[0], `/ctx/set?k=edited.n&v=2`)).error.should.match(/the value of edited \(global\) is not JSON/);
    (await redis.command('HGET', 'channel-sessions:c:global', 'edited')).should.match(/\{"n": 1, oops/);
    (await call(reds[1], '/ctx/get?k=b')).should.eql({ values: ['text'] });
    (await call(reds[1], `/ctx/set?k=edited&v=${encodeURIComponent('{"n":3}')}`)).should.eql({ ok: true });
    (await call(reds[0], '/ctx/get?k=edited.n')).should.eql({ values: [3] });
  });

  it('tells a flow that uses it synchronously to use the callback form', async function () {
    (await call(reds[0], '/ctx/sync')).error.should.match(/asynchronous: use get\(key, store, callback\)/);
  });

  it('answers a flow with an error while Redis is down, and works again when it is back', async function () {
    await redis.stop();
    try {
      (await call(reds[0], '/ctx/get?k=a')).error.should.match(/Redis at redis:\/\/127\.0\.0\.1:\d+/);
    } finally {
      await redis.start();
    }
    const deadline = Date.now() + 10000;
    let body: any;
    do {
      await new Promise((r) => setTimeout(r, 100));
      body = await call(reds[1], '/ctx/get?k=b');
    } while (body.error && Date.now() < deadline);
    body.should.eql({ values: ['text'] });
    await reds[0].waitForLog(/Redis at redis:\/\/127\.0\.0\.1:\d+ is unavailable/);
  });

  it('never writes the password into the log', function () {
    for (const red of reds) red.logs.join('\n').should.not.match(/ctx-pa55word/);
  });
});
