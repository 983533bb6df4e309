import should from 'should';
import { chain, tab, uid } from '../harness/flows';
import { eventually, NodeRed } from '../harness/node-red';
import { FakeTwilioMessagingApi } from '../fakes/twilio-messaging-api';
import { ACCOUNT_SID, AUTH_TOKEN, inboundForm, messagingEnvironment, postInbound } from '../fakes/twilio-messaging-webhooks';

const OURS = '+15550002000';
const WA_OURS = 'whatsapp:+14155230002';
/** Over Twilio's 1600-character Body limit, which the fake enforces (21617) as Twilio does. */
const LONG = Array.from({ length: 300 }, (_, i) => `word${i}`).join(' ');

/** A text longer than one message (a prompt, a WhatsApp text) reaches the person in several, in order. */
describe('messaging: texts over the Body limit', function () {
  let red: NodeRed;
  let fake: FakeTwilioMessagingApi;
  const token = `tok-long-${uid()}`;

  before(async function () {
    fake = await FakeTwilioMessagingApi.start(ACCOUNT_SID, AUTH_TOKEN);
    red = await NodeRed.start();
    await red.deploy([
      messagingEnvironment('envLong', token, fake, red),
      tab('longTab', 'Long texts'),
      ...chain('longTab', [
        ['telco-sms-start', 'lSms', { environment: 'envLong' }],
        ['input-task', 'lAsk', { prompt: '{message.text}', resultVariable: 'answer' }],
        ['end-task', 'lEnd'],
      ]),
      ...chain('longTab', [
        ['telco-messenger-start', 'lWa', { environment: 'envLong' }],
        ['output-task', 'lSay', { text: '{message.text}' }],
        ['end-task', 'lEnd2'],
      ]),
    ]);
  });
  after(async function () {
    await red?.close();
    await fake?.close();
  });

  function bodiesTo(user: string): string[] {
    return fake.messagesTo(user).map((m) => String(m.Body));
  }

  it("an InputTask's prompt goes in as many SMS as it needs, each within 1600 characters, in order", async function () {
    should(LONG.length).be.above(1600);
    const user = '+15550002001';
    should((await postInbound(red, token, inboundForm(user, OURS, LONG))).status).equal(200);
    await eventually(() => bodiesTo(user).length >= 2 || undefined, 10000, 'the prompt');
    const bodies = bodiesTo(user);
    should(bodies.every((b) => b.length <= 1600)).be.true();
    should(bodies.join(' ')).equal(LONG);
  });

  it('a WhatsApp text goes in as many messages as it needs, in order', async function () {
    const user = 'whatsapp:+15550002002';
    should((await postInbound(red, token, inboundForm(user, WA_OURS, LONG))).status).equal(200);
    await eventually(() => bodiesTo(user).length >= 2 || undefined, 10000, 'the text');
    should(bodiesTo(user).join(' ')).equal(LONG);
  });
});
