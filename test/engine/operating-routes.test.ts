import should from 'should';
import { chain, tab, uid } from '../harness/flows';
import { NodeRed, NODE_RED_DIR, eventually, request } from '../harness/node-red';
import { RedisServer, redisContextSettings } from '../harness/redis';
import { FakeTwilioMessagingApi } from '../fakes/twilio-messaging-api';
import { ACCOUNT_SID, AUTH_TOKEN, inboundForm, messagingEnvironment, postInbound, twoQuestionSurvey } from '../fakes/twilio-messaging-webhooks';
import { join } from 'node:path';
import type { FakeSlack } from '../fakes/slack-api';
import { teamchatEnvironment } from '../fakes/slack-flows';
import { voiceEnvironment } from '../harness/voice-flows';

/** One sample of the metrics text: the value of `name` with exactly these labels, 0 when absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  const wanted = Object.entries(labels)
    .map(([k, v]) => `${k}="${v}"`)
    .join(',');
  const line = text.split('\n').find((l) => l.startsWith(wanted ? `${name}{${wanted}} ` : `${name} `));
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
}

/** A series' value, or undefined when the scrape has no such series (where `sample` says 0). */
function series(text: string, name: string, labels: Record<string, string>): number | undefined {
  const wanted = Object.entries(labels)
    .map(([k, v]) => `${k}="${v}"`)
    .join(',');
  const line = text.split('\n').find((l) => l.startsWith(`${name}{${wanted}} `));
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : undefined;
}

/**
 * The operator's routes: GET /channel-sessions/health (httpNode root, no auth) and GET
 * /channel-sessions/metrics (admin API, read permission), on a real Node-RED whose Sessions are
 * in a real redis-server that the test stops and starts again.
 */
describe('health and metrics', function () {
  this.timeout(90000);
  let redis: RedisServer;
  let red: NodeRed;
  let fake: FakeTwilioMessagingApi;
  const token = 'opMetricsToken00000000001';
  const ours = '+15550001111';
  const route = '/api/TelcoModule/Messaging/inbound/:token';
  const metrics = async () => {
    const res = await red.admin('GET', '/channel-sessions/metrics');
    should(res.status).equal(200);
    should(res.headers.get('content-type')).match(/^text\/plain;.*version=0\.0\.4/);
    return res.text;
  };
  const health = () => red.request('GET', '/channel-sessions/health');

  before(async function () {
    redis = await RedisServer.start();
    fake = await FakeTwilioMessagingApi.start(ACCOUNT_SID, AUTH_TOKEN);
    red = await NodeRed.start({ settingsCode: redisContextSettings(redis.url), settings: { runtimeState: { enabled: true } } });
    const z = uid('tab');
    await red.deploy([tab(z), messagingEnvironment('opEnv', token, fake, red, { sessionStore: 'shared' }), ...twoQuestionSurvey(z, 'opEnv', 'op')]);
  });
  after(async function () {
    await red?.close();
    await fake?.close();
    await redis?.close();
  });

  it('counts accepted and refused webhooks, steps, provider calls and retries, and reads the Session gauges from the store', async function () {
    const before = await metrics();
    const accepted = { route, outcome: 'accepted', reason: '' };
    const user = '+15557770001';
    should((await postInbound(red, token, inboundForm(user, ours, 'hi'))).status).equal(200);
    await eventually(() => fake.messagesTo(user).length === 1, 8000, 'Q1 sent');
    // The step is counted once it is committed, just after its reply went out.
    const committed = { kind: 'messaging', outcome: 'committed' };
    let text = await eventually(
      async () => {
        const now = await metrics();
        return sample(now, 'channel_sessions_steps_total', committed) > sample(before, 'channel_sessions_steps_total', committed) && now;
      },
      8000,
      'the step counted',
    );
    should(sample(text, 'channel_sessions_webhooks_total', accepted)).equal(sample(before, 'channel_sessions_webhooks_total', accepted) + 1);
    should(sample(text, 'channel_sessions_steps_total', { kind: 'messaging', outcome: 'committed' })).be.above(
      sample(before, 'channel_sessions_steps_total', { kind: 'messaging', outcome: 'committed' }),
    );
    should(sample(text, 'channel_sessions_step_duration_seconds_count', { kind: 'messaging' })).be.above(0);
    should(sample(text, 'channel_sessions_step_duration_seconds_bucket', { kind: 'messaging', le: '+Inf' })).equal(
      sample(text, 'channel_sessions_step_duration_seconds_count', { kind: 'messaging' }),
    );
    should(sample(text, 'channel_sessions_provider_calls_total', { provider: 'twilio' })).equal(
      sample(before, 'channel_sessions_provider_calls_total', { provider: 'twilio' }) + 1,
    );
    const sms = { environment: 'env opEnv', environment_id: 'opEnv', module: 'messaging', channel: 'TelcoMessagingSms' };
    should(sample(text, 'channel_sessions_sessions', sms)).equal(1);
    should(sample(text, 'channel_sessions_sessions_waiting', sms)).equal(1);
    should(sample(text, 'channel_sessions_sessions_waiting_at_node', { node: 'opQ1' })).equal(1);

    // A forged webhook (wrong signing key) is refused and counted as such.
    const refused = { route, outcome: 'refused', reason: 'signature' };
    should((await postInbound(red, token, inboundForm('+15557770002', ours, 'hi'), 'not-the-auth-token')).status).equal(403);
    text = await metrics();
    should(sample(text, 'channel_sessions_webhooks_total', refused)).equal(sample(before, 'channel_sessions_webhooks_total', refused) + 1);

    // The fake answers 503 once: the reply is sent again, one retry counted, no failure.
    fake.inject(user, { status: 503 });
    should((await postInbound(red, token, inboundForm(user, ours, 'first answer'))).status).equal(200);
    await eventually(() => fake.messagesTo(user).length === 2, 8000, 'Q2 sent after the retry');
    text = await eventually(
      async () => {
        const now = await metrics();
        return sample(now, 'channel_sessions_sessions_waiting_at_node', { node: 'opQ2' }) === 1 && now;
      },
      8000,
      'the Session waiting at Q2',
    );
    should(sample(text, 'channel_sessions_provider_retries_total', { provider: 'twilio' })).equal(
      sample(before, 'channel_sessions_provider_retries_total', { provider: 'twilio' }) + 1,
    );
    should(sample(text, 'channel_sessions_provider_failures_total', { provider: 'twilio' })).equal(
      sample(before, 'channel_sessions_provider_failures_total', { provider: 'twilio' }),
    );
    should(sample(text, 'channel_sessions_sessions_waiting_at_node', { node: 'opQ2' })).equal(1);
  });

  it('says in each help line what its labels hold, and counts a Test chat Session in no gauge, per node as per Environment', async function () {
    const before = await metrics();
    should(before).match(/^# HELP channel_sessions_webhooks_total .*signature.*unknown_environment/m);
    should(before).match(/^# HELP channel_sessions_sessions_waiting_at_node .*Test chat Sessions not counted/m);
    const res = await red.admin('POST', '/channel-sessions/test-sessions', { start: 'opStart', testData: { from: '+15557770099' } });
    should(res.status).equal(201);
    const sessionId = (res.body as { id: string }).id;
    // A messaging start in the Test chat waits for the person's opening message.
    if ((res.body as { waitingAt?: { opening?: boolean } }).waitingAt?.opening) {
      should((await red.admin('POST', `/channel-sessions/test-sessions/${sessionId}/messages`, { text: 'hi' })).status).be.below(300);
    }
    await eventually(
      async () => (await red.admin('GET', `/channel-sessions/sessions/${sessionId}`)).body?.waitingAt?.nodeId === 'opQ1',
      8000,
      'the test Session waiting at Q1',
    );
    const text = await metrics();
    const sms = { environment: 'env opEnv', environment_id: 'opEnv', module: 'messaging', channel: 'TelcoMessagingSms' };
    should(sample(text, 'channel_sessions_sessions_waiting_at_node', { node: 'opQ1' })).equal(
      sample(before, 'channel_sessions_sessions_waiting_at_node', { node: 'opQ1' }),
    );
    should(sample(text, 'channel_sessions_sessions_waiting', sms)).equal(sample(before, 'channel_sessions_sessions_waiting', sms));
  });

  it('never shows a step counted as committed that the Session gauges of the same scrape do not show', async function () {
    const user = '+15557770009';
    const committed = { kind: 'messaging', outcome: 'committed' };
    const sms = { environment: 'env opEnv', environment_id: 'opEnv', module: 'messaging', channel: 'TelcoMessagingSms' };
    const before = sample(await metrics(), 'channel_sessions_sessions', sms);
    // The reply is held by the provider, so the step is between its send and its commit while the
    // scrape reads the store's counts; the store is frozen so the scrape's reads and the step's
    // commit line up in that order (a scrape that began before the commit).
    fake.inject(user, { holdMs: 1500 });
    should((await postInbound(red, token, inboundForm(user, ours, 'hi'))).status).equal(200);
    await eventually(() => fake.messagesTo(user).length === 1, 8000, 'Q1 asked of the provider');
    const stepsBefore = sample(await metrics(), 'channel_sessions_steps_total', committed);
    redis.pause();
    let scrape: Promise<string>;
    try {
      scrape = metrics();
      await new Promise((r) => setTimeout(r, 2500));
    } finally {
      redis.resume();
    }
    const text = await scrape;
    const counted = sample(text, 'channel_sessions_steps_total', committed) - stepsBefore;
    // The counters are read first, then the stores: a step committed in between shows in the gauges
    // and not yet in the count, which is fine; the other way round (counted, not shown) is not.
    should(sample(text, 'channel_sessions_sessions', sms) - before).be.aboveOrEqual(counted, 'the gauges show every Session whose step the scrape counts');
    await eventually(async () => sample(await metrics(), 'channel_sessions_sessions', sms) === before + 1, 8000, 'the Session counted');
  });

  it('answers health 200 while flows run and the store answers, 503 with the reason otherwise; a webhook refused then is a store fault', async function () {
    should(await health()).containEql({ status: 200, body: { status: 'ok' } });
    const faultsBefore = sample(await metrics(), 'channel_sessions_store_faults_total', { store: 'redis' });

    await redis.stop();
    const down = await eventually(
      async () => {
        const res = await health();
        return res.status === 503 && res;
      },
      10000,
      'health 503 with Redis down',
    );
    should(down.body).eql({ status: 'unavailable', reason: 'a Session store (redis) does not answer' });
    should((await postInbound(red, token, inboundForm('+15557770003', ours, 'hi'))).status).equal(503);
    const text = await metrics();
    should(sample(text, 'channel_sessions_store_faults_total', { store: 'redis' })).be.above(faultsBefore);
    should(sample(text, 'channel_sessions_webhooks_total', { route, outcome: 'refused', reason: 'store_unavailable' })).be.above(0);

    await redis.start();
    await eventually(async () => (await health()).status === 200, 15000, 'health 200 with Redis back');

    should((await red.admin('POST', '/flows/state', { state: 'stop' })).status).equal(200);
    should(await health()).containEql({ status: 503, body: { status: 'unavailable', reason: 'the flows are not running' } });
    should((await red.admin('POST', '/flows/state', { state: 'start' })).status).equal(200);
    await eventually(async () => (await health()).status === 200, 10000, 'health 200 with the flows started again');
  });
});

/**
 * The Session gauges per Environment and Channel: one messaging Environment serves SMS and
 * WhatsApp, so a Session of each shows as two series, on each kind of store (the durable default,
 * Redis, memory), read from the counts the store keeps.
 */
describe('Session gauges per Environment and Channel', function () {
  this.timeout(120000);
  let redis: RedisServer;
  let red: NodeRed;
  let fake: FakeTwilioMessagingApi;
  const stores = [
    { kind: 'sqlite', env: 'gaugeSql', sessionStore: '' },
    { kind: 'redis', env: 'gaugeRedis', sessionStore: 'shared' },
    { kind: 'memory', env: 'gaugeMem', sessionStore: 'memory' },
  ];
  const ours = '+15550002222';
  const waOurs = 'whatsapp:+14155238886';
  const metrics = async () => (await red.admin('GET', '/channel-sessions/metrics')).text;

  before(async function () {
    redis = await RedisServer.start();
    fake = await FakeTwilioMessagingApi.start(ACCOUNT_SID, AUTH_TOKEN);
    red = await NodeRed.start({
      settingsCode: `module.exports.contextStorage = {
  default: { module: 'memory' },
  memory: { module: 'memory' },
  shared: { module: require('@channel-sessions/node-red/redis-context'), config: { url: ${JSON.stringify(redis.url)} } },
};`,
    });
    const flows = stores.flatMap(({ env, sessionStore }, i) => {
      const sms = `gaugeSms${i}`;
      const wa = `gaugeWa${i}`;
      return [
        messagingEnvironment(env, `gaugeToken${i}`.padEnd(25, '0'), fake, red, { sessionStore }),
        tab(sms),
        ...twoQuestionSurvey(sms, env, `${env}Sms`),
        tab(wa),
        ...chain(wa, [
          ['telco-messenger-start', `${env}WaStart`, { environment: env }],
          ['input-task', `${env}WaQ1`, { prompt: 'Q1?', resultVariable: 'a1' }],
          ['end-task', `${env}WaEnd`],
        ]),
      ];
    });
    await red.deploy(flows);
  });
  after(async function () {
    await red?.close();
    await fake?.close();
    await redis?.close();
  });

  stores.forEach(({ kind, env }, i) => {
    it(`shows an SMS and a WhatsApp Session of one Environment as two series, live and waiting, at 0 before any Session and after the last ended (${kind})`, async function () {
      const token = `gaugeToken${i}`.padEnd(25, '0');
      const labels = (channel: string) => ({ environment: `env ${env}`, environment_id: env, module: 'messaging', channel });
      const sms = labels('TelcoMessagingSms');
      const wa = labels('TelcoMessagingMessenger');
      const user = `+1555888000${i}`;
      const waUser = `whatsapp:+44770090080${i}`;
      // Before any Session, each Channel of the deployed Environment is a series at 0, not missing.
      const empty = await metrics();
      for (const name of ['channel_sessions_sessions', 'channel_sessions_sessions_waiting']) {
        should(series(empty, name, sms)).equal(0, `${name} for SMS before any Session`);
        should(series(empty, name, wa)).equal(0, `${name} for WhatsApp before any Session`);
      }
      should((await postInbound(red, token, inboundForm(user, ours, 'hi'))).status).equal(200);
      should((await postInbound(red, token, inboundForm(waUser, waOurs, 'hi'))).status).equal(200);
      let text = await eventually(
        async () => {
          const now = await metrics();
          return sample(now, 'channel_sessions_sessions_waiting', sms) === 1 && sample(now, 'channel_sessions_sessions_waiting', wa) === 1 && now;
        },
        10000,
        'both Sessions waiting',
      );
      should(sample(text, 'channel_sessions_sessions', sms)).equal(1);
      should(sample(text, 'channel_sessions_sessions', wa)).equal(1);
      should(sample(text, 'channel_sessions_sessions_waiting_at_node', { node: `${env}SmsQ1` })).equal(1);
      should(sample(text, 'channel_sessions_sessions_waiting_at_node', { node: `${env}WaQ1` })).equal(1);

      // The SMS Session answers both questions and ends; the WhatsApp one still waits.
      await postInbound(red, token, inboundForm(user, ours, 'one'));
      await eventually(() => fake.messagesTo(user).length === 2, 8000, 'Q2 sent');
      await postInbound(red, token, inboundForm(user, ours, 'two'));
      text = await eventually(
        async () => {
          const now = await metrics();
          return sample(now, 'channel_sessions_sessions', sms) === 0 && now;
        },
        10000,
        'the SMS Session ended',
      );
      should(series(text, 'channel_sessions_sessions', sms)).equal(0);
      should(series(text, 'channel_sessions_sessions_waiting', sms)).equal(0);
      should(sample(text, 'channel_sessions_sessions', wa)).equal(1);
      should(sample(text, 'channel_sessions_sessions_waiting', wa)).equal(1);
    });
  });
});

describe('metrics with adminAuth on', function () {
  this.timeout(60000);
  let red: NodeRed;
  before(async function () {
    const bcrypt = require(require.resolve('bcryptjs', { paths: [NODE_RED_DIR, join(NODE_RED_DIR, 'node_modules/@node-red/editor-api')] }));
    const user = (username: string, permissions: string) => ({ username, password: bcrypt.hashSync('pw', 4), permissions });
    const users = [user('viewer', 'read'), user('flows-only', 'flows.read')];
    red = await NodeRed.start({ settingsCode: `module.exports.adminAuth = { type: 'credentials', users: ${JSON.stringify(users)} };` });
  });
  after(async () => red?.close());

  const tokenOf = async (username: string, scope: string) => {
    const res = await request(red.url('/auth/token'), 'POST', { client_id: 'node-red-admin', grant_type: 'password', scope, username, password: 'pw' });
    should(res.status).equal(200);
    return { Authorization: `Bearer ${res.body.access_token}` };
  };

  it('refuses a caller without a token or without read permission (401, as Node-RED answers both), and answers one with it', async function () {
    should((await request(red.url('/channel-sessions/metrics'), 'GET')).status).equal(401);
    should((await request(red.url('/channel-sessions/metrics'), 'GET', undefined, await tokenOf('flows-only', 'flows.read'))).status).equal(401);
    should((await request(red.url('/flows'), 'GET', undefined, await tokenOf('flows-only', 'flows.read'))).status).equal(200);
    const ok = await request(red.url('/channel-sessions/metrics'), 'GET', undefined, await tokenOf('viewer', 'read'));
    should(ok.status).equal(200);
    should(ok.text).match(/^# HELP channel_sessions_webhooks_total /m);
    // The health route needs no admin token.
    should((await request(red.url('/channel-sessions/health'), 'GET')).status).equal(200);
  });
});

/**
 * An Environment a deploy removes no longer counts for the operator: its store is not probed by
 * health (taking its Redis away must not take the instance out of a load balancer) and its
 * series leave the metrics; an Environment deployed again counts again.
 */
describe('health and metrics after a deploy removes an Environment', function () {
  this.timeout(90000);
  let redis: RedisServer;
  let red: NodeRed;
  let fake: FakeTwilioMessagingApi;
  const shared = messagingEnvironmentFor('goneShared', 'shared');
  const local = messagingEnvironmentFor('stayLocal', '');
  const metrics = async () => (await red.admin('GET', '/channel-sessions/metrics')).text;
  const health = () => red.request('GET', '/channel-sessions/health');
  function messagingEnvironmentFor(id: string, sessionStore: string) {
    return { id, sessionStore, token: `${id}Token`.padEnd(25, '0'), tab: `${id}Tab` };
  }
  /** A voice and a Slack Environment on Redis beside the messaging one, removed and brought back with it. */
  const others = () => [
    voiceEnvironment('goneVoice', { sessionStore: 'shared' }),
    teamchatEnvironment('goneSlack', 'goneSlackToken'.padEnd(25, '0'), { apiUrl: fake.url, botToken: 'xoxb-not-called' } as unknown as FakeSlack, {
      sessionStore: 'shared',
    }),
  ];
  function flows(...envs: Array<ReturnType<typeof messagingEnvironmentFor>>) {
    return envs.flatMap((e) => [
      messagingEnvironment(e.id, e.token, fake, red, { sessionStore: e.sessionStore }),
      tab(e.tab),
      ...twoQuestionSurvey(e.tab, e.id, e.id),
      ...(e === shared ? others() : []),
    ]);
  }

  before(async function () {
    redis = await RedisServer.start();
    fake = await FakeTwilioMessagingApi.start(ACCOUNT_SID, AUTH_TOKEN);
    red = await NodeRed.start({ settingsCode: redisContextSettings(redis.url) });
  });
  after(async function () {
    await red?.close();
    await fake?.close();
    await redis?.close();
  });

  it("stops probing a removed Environment's store and drops its series; deployed again, it counts again", async function () {
    await red.deploy(flows(shared, local));
    should(await health()).containEql({ status: 200 });
    const before = await metrics();
    should(
      series(before, 'channel_sessions_sessions', {
        environment: 'env goneShared',
        environment_id: 'goneShared',
        module: 'messaging',
        channel: 'TelcoMessagingSms',
      }),
    ).equal(0);
    for (const id of ['goneVoice', 'goneSlack']) should(before).match(new RegExp(`environment_id="${id}"`));

    await red.deploy(flows(local));
    await redis.stop();
    should(await health()).containEql({ status: 200, body: { status: 'ok' } });
    const text = await metrics();
    should(text).not.match(/environment_id="gone/);
    should(
      series(text, 'channel_sessions_sessions', {
        environment: 'env stayLocal',
        environment_id: 'stayLocal',
        module: 'messaging',
        channel: 'TelcoMessagingSms',
      }),
    ).equal(0);

    await red.deploy(flows(shared, local));
    const down = await eventually(
      async () => {
        const res = await health();
        return res.status === 503 && res;
      },
      10000,
      'health 503 once the Environment on Redis is back',
    );
    should(down.body).eql({ status: 'unavailable', reason: 'a Session store (redis) does not answer' });
    await redis.start();
    await eventually(async () => (await health()).status === 200, 15000, 'health 200 with Redis back');
  });
});
