import should from 'should';
import { chain, tab, uid, type FlowNode } from '../harness/flows';
import { Hold } from '../harness/hold';
import { NodeRed, eventually } from '../harness/node-red';
import { FakeTwilioMessagingApi } from '../fakes/twilio-messaging-api';
import { ACCOUNT_SID, AUTH_TOKEN, inboundForm, messageSid, messagingEnvironment, postInbound } from '../fakes/twilio-messaging-webhooks';

/**
 * A full deploy that cuts a step at once (deployDrain 0) after its reply went out, while the step
 * waits on a slow request: the step runs again in the new flows, in the same process, and gets the
 * reply back from its journal rather than sending it again; the next prompt follows once.
 */
describe('a deploy that cuts a step after its reply was sent', function () {
  this.timeout(120000);
  const OURS = '+15550009300';
  let fake: FakeTwilioMessagingApi;
  let hold: Hold;
  let red: NodeRed;

  beforeEach(async function () {
    fake = await FakeTwilioMessagingApi.start(ACCOUNT_SID, AUTH_TOKEN);
    hold = new Hold();
    await hold.start();
    red = await NodeRed.start({ settings: { channelSessions: { deployDrain: 0 } } });
  });
  afterEach(async function () {
    await red?.close();
    await hold?.close();
    await fake?.close();
  });

  function flows(token: string, z: string): FlowNode[] {
    return [
      messagingEnvironment('envFxd', token, fake, red),
      tab(z, 'Slow step'),
      ...chain(z, [
        ['telco-sms-start', 'fxdStart', { environment: 'envFxd' }],
        ['output-task', 'fxdGot', { text: 'got {message.text}' }],
        ['http request', 'fxdWait', { method: 'GET', ret: 'txt', url: `http://127.0.0.1:${hold.port}/slow`, paytoqs: 'ignore' }],
        ['input-task', 'fxdQ2', { prompt: 'Q2?', resultVariable: 'a2' }],
        ['end-task', 'fxdEnd'],
      ]),
    ];
  }

  it('the reply is not sent again by the step run again after the deploy; Q2 follows once', async function () {
    const token = `tok-fxd-${uid()}`;
    const z = uid('tab');
    await red.deploy(flows(token, z));
    const users = ['+15553000001', '+15553000002', '+15553000003'];
    for (const user of users) should((await postInbound(red, token, inboundForm(user, OURS, 'A1', { MessageSid: messageSid() }))).status).equal(200);
    await eventually(() => hold.calls >= users.length, 15000, 'every step to wait on its slow request after its reply');
    // A full deploy of the same flows: every node stops, the steps are cut and run again.
    await red.deploy(flows(token, z));
    await eventually(() => hold.calls >= 2 * users.length, 15000, 'every step to run again, up to its slow request');
    hold.open();
    const bodies = (user: string) => fake.messagesTo(user).map((m) => String(m.Body));
    await eventually(() => users.every((u) => bodies(u).includes('Q2?')), 20000, 'every next prompt');
    await new Promise((r) => setTimeout(r, 500));
    for (const user of users) should(bodies(user)).eql(['got A1', 'Q2?'], user);
  });
});
