import { createHash } from 'node:crypto';
import 'should';
import type { SessionRecord } from '../../src/model/session';
import { node, tab, type FlowNode } from '../harness/flows';
import { echoProcess, loopbackEnvironment, outbox, startWithLoopback } from '../harness/loopback';
import { eventually, request, type NodeRed } from '../harness/node-red';
import { RandomProxy } from '../harness/proxy';
import { RedisServer, redisContextSettings } from '../harness/redis';

const redisContext = require('../../../redis-context.js');
const { SCRIPTS } = require('../../../dist/stores/redis/scripts.js') as { SCRIPTS: Record<'claimNext' | 'commit' | 'releaseIfIdle', string> };
/** The scripts' SHA1s, as the store names them to Redis (EVALSHA). */
const SHA = Object.fromEntries(
  (['claimNext', 'commit', 'releaseIfIdle'] as const).map((name) => [name, createHash('sha1').update(SCRIPTS[name]).digest('hex')]),
) as Record<'claimNext' | 'commit' | 'releaseIfIdle', string>;
type Store = import('../../src/stores/redis/redis-store').RedisStore;

const ENV = 'envr';
const trace = (what: string) => process.env.CS_TRACE && console.log(`${new Date().toISOString()} ${what}`);
const CONVERSATIONS = 200;
const MESSAGES = 5;

/** The echo Process, and a second one whose InputTask gives up after 1 s (its timer). */
function flows(): FlowNode[] {
  const z = 'tmr';
  return [
    loopbackEnvironment(ENV, { sessionStore: 'shared' }),
    ...echoProcess('echo', ENV),
    tab(z, 'timer'),
    node('loopback-other-start', `${z}-start`, z, { environment: ENV, variable: 'loop' }, [[`${z}-ask`]]),
    node('input-task', `${z}-ask`, z, { prompt: 'quick?', resultVariable: 'answer', timeout: 1 }, [[`${z}-yes`], [], [`${z}-late`]]),
    node('output-task', `${z}-yes`, z, { text: 'answered' }, [[`${z}-end`], []]),
    node('output-task', `${z}-late`, z, { text: 'timed out' }, [[`${z}-end`], []]),
    node('end-task', `${z}-end`, z, {}),
  ];
}

/** What a provider does: send, and on a 5xx or a dropped connection send the same message again. */
async function deliver(url: string, body: Record<string, unknown>, deadlineMs = 90000): Promise<{ kind: string; sessionId: string | null }> {
  const deadline = Date.now() + deadlineMs;
  let last = '';
  for (let attempt = 0; Date.now() < deadline; attempt++) {
    try {
      // Slack gives up on an answer after 3 s and sends again; a longer wait here keeps retries rare.
      const res = await fetch(url, {
        method: 'POST',
        body: JSON.stringify(body),
        headers: { 'content-type': 'application/json' },
        signal: AbortSignal.timeout(20000),
      });
      const text = await res.text();
      if (res.status === 200) return JSON.parse(text);
      last = `${res.status} ${text}`;
    } catch (err) {
      if ((err as Error).name === 'TimeoutError') trace(`no answer in 20 s to ${JSON.stringify(body)} at ${url}`);
      last = (err as Error).message;
    }
    await new Promise((r) => setTimeout(r, Math.min(50 * 2 ** attempt, 1000)));
  }
  throw new Error(`${JSON.stringify(body)} was never accepted: ${last}`);
}

/** Runs `work` for each item with at most `limit` at once. */
async function pool<T>(items: T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < items.length) await work(items[next++]);
    }),
  );
}

describe('several Node-RED instances sharing Sessions in Redis', function () {
  this.timeout(240000);
  let redis: RedisServer;
  const reds: NodeRed[] = [];
  let proxy: RandomProxy;
  let store: Store;

  before(async function () {
    redis = await RedisServer.start();
    const settings = { channelSessions: { sweepInterval: 0.5 } };
    // One after another: three runtimes loading at once on a busy 2-core machine can miss the start timeout.
    for (let i = 0; i < 3; i++) reds.push(await startWithLoopback({ settings, settingsCode: redisContextSettings(redis.url) }));
    for (const red of reds) await red.deploy(flows());
    proxy = new RandomProxy(reds.map((red, i) => ({ name: 'abc'[i], port: red.port })));
    await proxy.listen();
    store = redisContext.sessionStoreFor({ url: redis.url });
    await store.whenConnected(5000);
  });
  after(async function () {
    await proxy?.close();
    await store?.close();
    for (const red of reds) await red.close();
    await redis?.close();
  });

  /** Every instance's replies to one conversation, added up. */
  async function said(key: string): Promise<string[]> {
    const all: string[] = [];
    for (const red of reds) {
      try {
        all.push(...(await outbox(red, key)).said);
      } catch {
        // an instance that is down said nothing we can still see
      }
    }
    return all;
  }

  function expectedBot(texts: string[]): string[] {
    return [`hello ${texts[0]}`, 'next?', ...texts.slice(1).flatMap((t) => [`got ${t}`, 'next?'])];
  }

  /** The Session as Redis has it: one per conversation, its history in arrival order; and, unless an instance restarted since (its record of replies is in its memory), every reply once. */
  async function checkConversation(key: string, texts: string[], replies = true): Promise<void> {
    const session = (await store.liveSession({ environment: ENV, conversation: key })) as SessionRecord;
    (session !== undefined).should.be.true(`conversation ${key} has a live Session`);
    const history = await store.history(session.id);
    history
      .filter((h) => h.from === 'user')
      .map((h) => h.text)
      .should.eql(texts, `what ${key} received, in order`);
    history
      .filter((h) => h.from === 'bot')
      .map((h) => h.text)
      .should.eql(expectedBot(texts), `what ${key} answered, in order`);
    if (replies) (await said(key)).sort().should.eql(expectedBot(texts).sort(), `every reply to ${key} delivered once`);
  }

  /** Each conversation sends its messages one after another, each to whichever instance the proxy picks; many conversations at once. */
  async function burst(prefix: string, during?: (progress: () => number) => Promise<void>): Promise<string[]> {
    const keys = Array.from({ length: CONVERSATIONS }, (_, i) => `${prefix}${i}`);
    let delivered = 0;
    const sending = pool(keys, 50, async (key) => {
      for (let m = 1; m <= MESSAGES; m++) {
        await deliver(proxy.url(`/loopback/${ENV}/${key}`), { text: `m${m}`, id: `${key}-${m}` });
        delivered++;
        if (delivered % 100 === 0) trace(`${delivered} delivered`);
      }
    });
    if (during) await during(() => delivered);
    await sending;
    return keys;
  }

  async function checkAll(keys: string[], replies = true): Promise<void> {
    const texts = Array.from({ length: MESSAGES }, (_, i) => `m${i + 1}`);
    // A message whose first answer was lost with its instance is handled after that instance's lease runs out.
    let behind: string[] = [];
    try {
      await eventually(
        async () => {
          behind = [];
          for (const key of keys) {
            const s = await store.liveSession({ environment: ENV, conversation: key });
            if (!s || (await store.history(s.id)).filter((h) => h.from === 'user').length < MESSAGES) behind.push(key);
          }
          return behind.length === 0;
        },
        60000,
        'every conversation to have handled its messages',
      );
    } catch (err) {
      const cid = JSON.stringify([ENV, behind[0]]);
      const detail = [await redis.command('LRANGE', `channel-sessions:s:q:${cid}`, '0', '-1'), await redis.command('GET', `channel-sessions:s:lease:${cid}`)];
      throw new Error(`${(err as Error).message}: ${behind.length} behind, ${behind.slice(0, 5).join()}; first: ${detail.join(' | ')}`, { cause: err });
    }
    for (const key of keys) await checkConversation(key, texts, replies);
  }

  it(`${CONVERSATIONS} conversations x ${MESSAGES} messages spread across 3 instances: one Session each, in order, every reply once`, async function () {
    const keys = await burst('p');
    await checkAll(keys);
    new Set(proxy.served).size.should.equal(3);
    (await store.count({ environment: ENV })).should.equal(CONVERSATIONS);
  });

  it('two first messages of one conversation reaching two instances at once start one Session', async function () {
    for (let i = 0; i < 20; i++) {
      const key = `twin${i}`;
      const answers = await Promise.all(
        [reds[0], reds[1]].map((red, n) => deliver(red.url(`/loopback/${ENV}/${key}`), { text: `first${n}`, id: `${key}-${n}` })),
      );
      // The instance whose message opened the Session may not be the one that handled it: at most one says 'started'.
      answers.filter((a) => a.kind === 'started').length.should.be.belowOrEqual(1, JSON.stringify(answers));
      (await store.count({ environment: ENV })).should.be.aboveOrEqual(1);
      const session = (await store.liveSession({ environment: ENV, conversation: key }))!;
      (await store.history(session.id)).filter((h) => h.from === 'user').length.should.equal(2);
      (await said(key)).filter((t) => t.startsWith('hello')).length.should.equal(1);
    }
  });

  it('a redelivered message is handled once in the whole cluster', async function () {
    const key = 'redelivered';
    await deliver(proxy.url(`/loopback/${ENV}/${key}`), { text: 'm1', id: `${key}-1` });
    const answers = await Promise.all(reds.map((red) => deliver(red.url(`/loopback/${ENV}/${key}`), { text: 'm2', id: `${key}-2` })));
    answers.filter((a) => a.kind === 'ignored').length.should.equal(2);
    await eventually(async () => (await said(key)).includes('got m2'), 10000, 'm2 handled');
    await checkConversation(key, ['m1', 'm2']);
  });

  it('a message on one instance: the claim carries what that instance wrote instead of getting it back, and the commit lets the conversation go', async function () {
    const key = 'one-instance';
    await deliver(reds[0].url(`/loopback/${ENV}/${key}`), { text: 'm1', id: `${key}-1` });
    const monitor = await redis.monitor();
    try {
      await deliver(reds[0].url(`/loopback/${ENV}/${key}`), { text: 'm2', id: `${key}-2` });
      await eventually(() => monitor.lines.some((l) => l.includes(`"${SHA.commit}"`) && l.includes(key)), 5000, "the step's commit");
    } finally {
      monitor.stop();
    }
    const ofConversation = (script: keyof typeof SHA) => monitor.lines.filter((l) => l.includes(`"${SHA[script]}"`) && l.includes(key));
    // The claim names the record's digest and the item's seq the instance holds (then the time, which
    // marks the item handed out for the effects journal): Redis need not send them.
    ofConversation('claimNext')
      .some((l) => /"[0-9a-f]{16}" "\d+" "\d{13}"$/.test(l))
      .should.be.true(ofConversation('claimNext').join('\n'));
    ofConversation('releaseIfIdle').should.eql([], 'no call of its own to let the conversation go');
    (await redis.command('EXISTS', `channel-sessions:s:lease:${JSON.stringify([ENV, key])}`)).should.equal(':0');
    await checkConversation(key, ['m1', 'm2']);
  });

  it('the Sessions view of any instance lists the Sessions of all, and ends one wherever it runs', async function () {
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push((await deliver(reds[i].url(`/loopback/${ENV}/view${i}`), { text: 'hi' })).sessionId);
    for (const red of reds) {
      const listed = (await red.admin('GET', `/channel-sessions/sessions?environment=${ENV}`)).body as Array<{ id: string }>;
      for (const id of ids) listed.map((s) => s.id).should.containEql(id);
    }
    const ended = await reds[2].admin('DELETE', `/channel-sessions/sessions/${ids[0]}`);
    ended.status.should.equal(200, ended.text);
    ((await store.liveSession({ environment: ENV, conversation: 'view0' })) === undefined).should.be.true();
    const after = (await reds[1].admin('GET', `/channel-sessions/sessions?environment=${ENV}`)).body as Array<{ id: string }>;
    after.map((s) => s.id).should.not.containEql(ids[0]);
  });

  it('kill -9 of one instance during a burst: nothing lost, nothing reordered, the others go on', async function () {
    const victim = reds[2];
    const keys = await burst('k', async (progress) => {
      await eventually(() => progress() > CONVERSATIONS, 60000, 'the burst to be under way');
      await victim.kill();
      proxy.setBackends([0, 1].map((i) => ({ name: 'abc'[i], port: reds[i].port })));
    });
    // The dead instance's replies are gone with its memory; what Redis holds must be whole.
    const texts = Array.from({ length: MESSAGES }, (_, i) => `m${i + 1}`);
    await eventually(
      async () => {
        for (const key of keys) {
          const s = await store.liveSession({ environment: ENV, conversation: key });
          if (!s || (await store.history(s.id)).filter((h) => h.from === 'user').length < MESSAGES) return false;
        }
        return true;
      },
      90000,
      'every conversation to have handled its messages',
    );
    for (const key of keys) {
      const session = (await store.liveSession({ environment: ENV, conversation: key }))!;
      const history = await store.history(session.id);
      history
        .filter((h) => h.from === 'user')
        .map((h) => h.text)
        .should.eql(texts, key);
      history
        .filter((h) => h.from === 'bot')
        .map((h) => h.text)
        .should.eql(expectedBot(texts), key);
    }
    await victim.restart();
    proxy.setBackends(reds.map((red, i) => ({ name: 'abc'[i], port: red.port })));
  });

  it('an InputTask timeout fires once, on another instance, after the instance that armed it stopped', async function () {
    const keys = ['t1', 't2', 't3'];
    for (const key of keys) (await deliver(reds[0].url(`/loopback/${ENV}/${key}`), { text: 'hi', channel: 'LoopbackOther' })).kind.should.equal('started');
    for (const key of keys) (await outbox(reds[0], key)).said.should.eql(['quick?']);
    await reds[0].stop();
    try {
      await eventually(
        async () => {
          for (const key of keys) if (!(await said(key)).includes('timed out')) return false;
          return true;
        },
        20000,
        'the timers to fire',
      );
      await new Promise((r) => setTimeout(r, 1500)); // time for a second firing, if there were one
      for (const key of keys) {
        (await said(key)).filter((t) => t === 'timed out').should.have.length(1);
        ((await store.liveSession({ environment: ENV, conversation: key })) === undefined).should.be.true();
      }
    } finally {
      await reds[0].restart();
    }
  });

  it('Redis stopped and restarted under load: webhooks answer 503 meanwhile, then everything is handled', async function () {
    const statuses = new Set<number>();
    const keys = await burst('r', async (progress) => {
      await eventually(() => progress() > CONVERSATIONS, 60000, 'the burst to be under way');
      trace('stopping Redis');
      await redis.stop();
      trace('stopped');
      const res = await request(proxy.url(`/loopback/${ENV}/probe`), 'POST', { text: 'x' });
      statuses.add(res.status);
      await new Promise((r) => setTimeout(r, 1500));
      await redis.start();
      trace('Redis started');
    });
    trace('burst done');
    statuses.has(503).should.be.true([...statuses].join());
    // A step whose commit failed while Redis was away runs again (its replies may repeat): Redis's record must be whole.
    await checkAll(keys, false);
    for (const red of reds) red.logs.some((l) => /Redis at redis:\/\/127\.0\.0\.1:\d+ is unavailable/.test(l)).should.be.true();
  });

  it('a rolling deploy (each instance restarted in turn while the others serve) loses nothing', async function () {
    const keys = await burst('d', async (progress) => {
      for (const red of reds) {
        await eventually(() => progress() > CONVERSATIONS / 2, 60000, 'the burst to be under way');
        await red.restart();
      }
    });
    await checkAll(keys, false);
  });
});
