import should from 'should';
import { chain, tab, type FlowNode } from '../harness/flows';
import { Hold } from '../harness/hold';
import { NodeRed, eventually } from '../harness/node-red';
import { RedisServer, redisContextSettings } from '../harness/redis';
import { FakeTwilioMessagingApi } from '../fakes/twilio-messaging-api';
import { ACCOUNT_SID, AUTH_TOKEN, inboundForm, messageSid, messagingEnvironment, postInbound } from '../fakes/twilio-messaging-webhooks';

const OURS = '+15550009200';
const CONVERSATIONS = 10;
const TOKEN = 'tok-cluster-effects-0123456789ab';

/**
 * Three instances on Redis: the one running the steps is killed (SIGKILL) after Twilio took each
 * step's reply and while each step waits on a slow request. The instances that take the
 * conversations over run those steps again from their recorded messages: the replies are in the
 * steps' journals in Redis, so they are not sent again; the next prompt is sent once.
 */
describe('several instances on Redis: the instance taking over a dead one sends nothing twice', function () {
  this.timeout(180000);
  let redis: RedisServer;
  let fake: FakeTwilioMessagingApi;
  let hold: Hold;
  const reds: NodeRed[] = [];

  function flows(red: NodeRed): FlowNode[] {
    const z = 'fxc';
    return [
      messagingEnvironment('envFxc', TOKEN, fake, red, { sessionStore: 'shared' }),
      tab(z, 'Slow step'),
      ...chain(z, [
        ['telco-sms-start', 'fxcStart', { environment: 'envFxc' }],
        ['output-task', 'fxcGot', { text: 'got {message.text}' }],
        ['http request', 'fxcWait', { method: 'GET', ret: 'txt', url: `http://127.0.0.1:${hold.port}/slow`, paytoqs: 'ignore' }],
        ['input-task', 'fxcQ2', { prompt: 'Q2?', resultVariable: 'a2' }],
        ['end-task', 'fxcEnd'],
      ]),
    ];
  }

  before(async function () {
    redis = await RedisServer.start();
    fake = await FakeTwilioMessagingApi.start(ACCOUNT_SID, AUTH_TOKEN);
    hold = new Hold();
    await hold.start();
    for (let i = 0; i < 3; i++) reds.push(await NodeRed.start({ settingsCode: redisContextSettings(redis.url) }));
    for (const red of reds) await red.deploy(flows(red));
  });
  after(async function () {
    for (const red of reds) await red.close();
    await hold?.close();
    await fake?.close();
    await redis?.close();
  });

  it(`kill -9 of the instance whose ${CONVERSATIONS} steps sent their replies: the others send each next prompt once, and no reply again`, async function () {
    const users = Array.from({ length: CONVERSATIONS }, (_, i) => `+1555200${String(i).padStart(4, '0')}`);
    const victim = reds[2];
    for (const user of users) should((await postInbound(victim, TOKEN, inboundForm(user, OURS, 'A1', { MessageSid: messageSid() }))).status).equal(200);
    // Each step replied (Twilio took it) and waits on its slow request, on the victim.
    await eventually(() => hold.calls >= CONVERSATIONS, 30000, 'every step to wait on its slow request');
    for (const user of users) should(fake.messagesTo(user).map((m) => m.Body)).eql(['got A1'], user);
    await victim.kill();
    hold.open();
    try {
      const bodies = (user: string) => fake.messagesTo(user).map((m) => String(m.Body));
      await eventually(() => users.every((u) => bodies(u).includes('Q2?')), 40000, 'every conversation to get its next prompt');
      await new Promise((r) => setTimeout(r, 1000));
      for (const user of users) should(bodies(user)).eql(['got A1', 'Q2?'], user);
    } finally {
      await victim.relaunch();
    }
  });
});
