import 'should';
import type { SessionRecord } from '../../src/model/session';
import { node, tab, type FlowNode } from '../harness/flows';
import { Hold } from '../harness/hold';
import { loopbackEnvironment, outbox, startWithLoopback } from '../harness/loopback';
import { eventually, type NodeRed } from '../harness/node-red';
import { RedisServer, redisContextSettings } from '../harness/redis';

const redisContext = require('../../../redis-context.js');
type Store = import('../../src/stores/redis/redis-store').RedisStore;

const ENV = 'envTake';
const CONVERSATIONS = 30;
/** What a person on SMS may wait for a reply when the instance handling it died. */
const TAKEOVER_MS = 10_000;

/** hello, next?, then each answer waits on an HTTP request (the Hold) before "got <answer>", and next? again. */
function flows(hold: Hold): FlowNode[] {
  const z = 'take';
  return [
    loopbackEnvironment(ENV, { sessionStore: 'shared' }),
    tab(z, 'slow answers'),
    node('loopback-start', `${z}-start`, z, { environment: ENV, variable: 'loop' }, [[`${z}-hello`]]),
    node('output-task', `${z}-hello`, z, { text: 'hello {loop.text}' }, [[`${z}-ask`], []]),
    node('input-task', `${z}-ask`, z, { prompt: 'next?', resultVariable: 'answer' }, [[`${z}-wait`], []]),
    node('http request', `${z}-wait`, z, { method: 'GET', ret: 'txt', url: `http://127.0.0.1:${hold.port}/slow`, paytoqs: 'ignore' }, [[`${z}-reply`]]),
    node('output-task', `${z}-reply`, z, { text: 'got {answer}' }, [[`${z}-ask`], []]),
  ];
}

/**
 * Several instances on Redis with the package's default timings (no sweepInterval set): an
 * instance killed while it holds conversations inside their steps leaves them to the others within
 * seconds, not a whole lease of half a minute; a slow step on a live instance keeps its lease.
 */
describe("several instances on Redis: a dead instance's conversations are taken over soon, a slow step is not", function () {
  this.timeout(180000);
  let redis: RedisServer;
  const reds: NodeRed[] = [];
  let hold: Hold;
  let store: Store;

  before(async function () {
    redis = await RedisServer.start();
    hold = new Hold();
    await hold.start();
    for (let i = 0; i < 3; i++) reds.push(await startWithLoopback({ settingsCode: redisContextSettings(redis.url) }));
    for (const red of reds) await red.deploy(flows(hold));
    store = redisContext.sessionStoreFor({ url: redis.url });
    await store.whenConnected(5000);
  });
  after(async function () {
    await store?.close();
    for (const red of reds) await red.close();
    await hold?.close();
    await redis?.close();
  });

  /** Posts a message without waiting for its outcome (the route answers once the step settles). */
  function post(red: NodeRed, key: string, text: string): void {
    void fetch(red.url(`/loopback/${ENV}/${key}`), {
      method: 'POST',
      body: JSON.stringify({ text, id: `${key}-${text}` }),
      headers: { 'content-type': 'application/json' },
    }).catch(() => undefined);
  }

  async function said(key: string, among: NodeRed[]): Promise<string[]> {
    const all: string[] = [];
    for (const red of among) all.push(...(await outbox(red, key)).said);
    return all;
  }

  async function session(key: string): Promise<SessionRecord | undefined> {
    return store.liveSession({ environment: ENV, conversation: key });
  }

  it(`kill -9 of the instance holding ${CONVERSATIONS} conversations inside their steps: each next reply within 10 s, in order, once`, async function () {
    const keys = Array.from({ length: CONVERSATIONS }, (_, i) => `k${i}`);
    keys.forEach((key, i) => post(reds[i % 3], key, 'm1'));
    await eventually(async () => (await Promise.all(keys.map(session))).every((s) => s?.state === 'waiting'), 20000, 'every Session to wait');
    const victim = reds[2];
    const survivors = [reds[0], reds[1]];
    for (const key of keys) post(victim, key, 'm2');
    // The victim holds every conversation's lease, its step waiting on the HTTP request.
    await eventually(() => hold.calls >= CONVERSATIONS, 20000, 'every step to be inside its HTTP request');
    const killedAt = Date.now();
    await victim.kill();
    hold.open();
    try {
      const repliedAt = new Map<string, number>();
      await eventually(
        async () => {
          for (const key of keys) {
            if (repliedAt.has(key)) continue;
            const found = await session(key);
            const got = found && (await store.history(found.id)).find((h) => h.from === 'bot' && h.text === 'got m2');
            if (got) repliedAt.set(key, got.at);
          }
          return repliedAt.size === CONVERSATIONS;
        },
        30000,
        'every conversation to get its next reply',
      );
      const late = keys.filter((k) => repliedAt.get(k)! - killedAt > TAKEOVER_MS).map((k) => `${k}: ${repliedAt.get(k)! - killedAt} ms`);
      late.should.eql([], 'replied within 10 s of the kill');
      for (const key of keys) {
        const history = await store.history((await session(key))!.id);
        history
          .filter((h) => h.from === 'user')
          .map((h) => h.text)
          .should.eql(['m1', 'm2'], key);
        history
          .filter((h) => h.from === 'bot')
          .map((h) => h.text)
          .should.eql(['hello m1', 'next?', 'got m2', 'next?'], key);
        // The victim was killed before it replied to m2: the survivors replied, once.
        (await said(key, survivors)).filter((t) => t === 'got m2').should.have.length(1, key);
      }
    } finally {
      await victim.relaunch();
    }
  });

  // 12 s: more than two leases (5 s) and more than a dead holder's conversations take to move on (10 s).
  it('a step waiting 12 s on an HTTP request keeps its lease: no other instance runs it', async function () {
    const slow = new Hold();
    await slow.start();
    try {
      for (const red of reds) await red.deploy(flows(slow));
      post(reds[0], 'slow', 'm1');
      await eventually(async () => (await session('slow'))?.state === 'waiting', 10000, 'the Session to wait');
      post(reds[0], 'slow', 'm2');
      await eventually(() => slow.calls === 1, 10000, 'the step to be inside its HTTP request');
      await new Promise((r) => setTimeout(r, 12000));
      slow.calls.should.equal(1, 'only the instance that holds the lease ran the step');
      slow.open();
      await eventually(
        async () => {
          const found = await session('slow');
          return Boolean(found && (await store.history(found.id)).some((h) => h.text === 'got m2'));
        },
        10000,
        'the reply',
      );
      slow.calls.should.equal(1);
      (await said('slow', reds)).filter((t) => t === 'got m2').should.have.length(1);
    } finally {
      await slow.close();
    }
  });
});
