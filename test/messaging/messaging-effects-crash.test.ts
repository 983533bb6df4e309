import should from 'should';
import { chain, tab, uid, type FlowNode } from '../harness/flows';
import { Hold } from '../harness/hold';
import { NodeRed, eventually } from '../harness/node-red';
import { FakeTwilioMessagingApi } from '../fakes/twilio-messaging-api';
import { ACCOUNT_SID, AUTH_TOKEN, inboundForm, messageSid, messagingEnvironment, postInbound } from '../fakes/twilio-messaging-webhooks';

/**
 * A step cut by a crash (SIGKILL) runs again from its recorded message after the restart. What it
 * had sent and Twilio had taken is in its effects journal and is not sent again; what was still on
 * its way and never made by the provider is sent once (messaging-crash-reconcile.test.ts). The person
 * reads each reply once.
 */
describe('SMS: a step cut by kill -9 says each reply once after the restart', function () {
  this.timeout(120000);
  const OURS = '+15550009100';
  let fake: FakeTwilioMessagingApi;
  let hold: Hold;
  let red: NodeRed;

  /** "got <text>", then the step waits on an HTTP request the test holds, then asks "Q2?". */
  function flows(token: string): FlowNode[] {
    const z = uid('tab');
    return [
      messagingEnvironment('envFx', token, fake, red),
      tab(z, 'Slow step'),
      ...chain(z, [
        ['telco-sms-start', 'fxStart', { environment: 'envFx' }],
        ['output-task', 'fxGot', { text: 'got {message.text}' }],
        ['http request', 'fxWait', { method: 'GET', ret: 'txt', url: `http://127.0.0.1:${hold.port}/slow`, paytoqs: 'ignore' }],
        ['input-task', 'fxQ2', { prompt: 'Q2?', resultVariable: 'a2' }],
        ['end-task', 'fxEnd'],
      ]),
    ];
  }

  beforeEach(async function () {
    fake = await FakeTwilioMessagingApi.start(ACCOUNT_SID, AUTH_TOKEN);
    hold = new Hold();
    await hold.start();
    red = await NodeRed.start();
  });
  afterEach(async function () {
    await red?.close();
    await hold?.close();
    await fake?.close();
  });

  const bodiesTo = (user: string) => fake.messagesTo(user).map((m) => String(m.Body));

  it('a reply Twilio answered before the kill is not sent again; the next prompt follows once', async function () {
    const token = `tok-fx-${uid()}`;
    await red.deploy(flows(token));
    const user = '+15551000001';
    // The webhook is acknowledged once recorded; the step then replies and waits on the held request.
    const res = await postInbound(red, token, inboundForm(user, OURS, 'A1', { MessageSid: messageSid() }));
    should(res.status).equal(200);
    await eventually(() => hold.calls >= 1, 15000, 'the step to wait on its slow request after the reply');
    should(bodiesTo(user)).eql(['got A1']);
    await red.kill();
    hold.open();
    await red.relaunch();
    await eventually(() => bodiesTo(user).includes('Q2?'), 20000, 'the next prompt after the restart');
    await new Promise((r) => setTimeout(r, 500));
    should(bodiesTo(user)).eql(['got A1', 'Q2?']);
    should(fake.attemptsTo(user)).have.length(2);
  });
});
