import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import twilio from 'twilio';
import should from 'should';
import { eventually, NodeRed, REPO_ROOT } from '../harness/node-red';
import { FakeTwilioMessagingApi } from '../fakes/twilio-messaging-api';
import { ACCOUNT_SID, AUTH_TOKEN, inboundForm, postInbound, sessionWhen } from '../fakes/twilio-messaging-webhooks';

const EXAMPLE = join(REPO_ROOT, 'examples', 'Delivery notice over SMS and WhatsApp.json');
const ENV = 'csdn000000000002';
const TEXT_OUT = 'csdn0000000000b1';
const INJECT = 'csdn0000000000a1';

/** The example deploys as shipped, runs in the Test chat, and with an account texts, waits, and takes the undelivered branch. */
describe('example: Delivery notice over SMS and WhatsApp', function () {
  let red: NodeRed;
  let fake: FakeTwilioMessagingApi;
  const flow = JSON.parse(readFileSync(EXAMPLE, 'utf8')) as any[];

  before(async function () {
    fake = await FakeTwilioMessagingApi.start(ACCOUNT_SID, AUTH_TOKEN);
    red = await NodeRed.start();
  });
  after(async function () {
    await red?.close();
    await fake?.close();
  });

  async function testSession(testData: Record<string, unknown>, mode?: 'channel') {
    const res = await red.admin('POST', '/channel-sessions/test-sessions', { start: TEXT_OUT, testData, ...(mode ? { mode } : {}) });
    should(res.status).equal(201, res.text);
    return res.body;
  }

  it('deploys as is and runs both paths in the Test chat from Text out', async function () {
    await red.deploy(flow);
    await red.waitForLog(/\[telco-messaging-environment:Delivery numbers\] No token: open this Environment in the editor/);
    should(red.logs.some((l) => /\[error\]/.test(l))).be.false(red.logs.filter((l) => /\[error\]/.test(l)).join('\n'));
    const sms = await testSession({ to: '+15551234567', from: '+15557654321' });
    // The node's test data carries the order as msg.vars would, so the text reads as the person gets it.
    should(sms.transcript.map((l: any) => [l.from, l.text])).eql([
      ['bot', 'Hi Ann, your parcel A-1047 arrives today, 2-4 pm. Reply YES to confirm or LATER to rearrange.'],
    ]);
    const reply = await red.admin('POST', `/channel-sessions/test-sessions/${sms.id}/messages`, { text: 'YES' });
    should(reply.body.state).equal('completed');
    should(reply.body.transcript.filter((l: any) => l.from === 'bot').at(-1).text).equal('Thanks Ann, noted: YES.');
    const wa = await testSession({ to: 'whatsapp:+15551234567', from: 'whatsapp:+15557654321' });
    should(wa.transcript.at(-1)).containEql({ kind: 'buttons' });
  });

  it("plays the addresses' Channel in the Test chat (the sidebar's default): whatsapp: addresses run on WhatsApp and show the buttons", async function () {
    await red.deploy(flow);
    const wa = await testSession({ to: 'whatsapp:+15551234567', from: 'whatsapp:+15557654321' }, 'channel');
    should(wa.channel).equal('TelcoMessagingMessenger', JSON.stringify(wa.log));
    should(wa.vars.message).containEql({ channel: 'TelcoMessagingMessenger', from: 'whatsapp:+15551234567', direction: 'outbound' });
    should(wa.transcript.at(-1)).containEql({ kind: 'buttons' });
    should(wa.state).equal('waiting', JSON.stringify(wa.log));
    const sms = await testSession({ to: '+15551234567', from: '+15557654321' }, 'channel');
    should(sms.channel).equal('TelcoMessagingSms');
    should(sms.vars.message.channel).equal('TelcoMessagingSms');
    should(sms.transcript.map((l: any) => l.text).at(-1)).match(/^Hi Ann, your parcel A-1047 arrives today, 2-4 pm\./);
  });

  it('with an account: the inject texts the person, a reply completes the Session, an undelivered notice takes the error branch', async function () {
    const token = 'exampleDeliveryToken000000';
    await red.deploy(
      flow.map((n) =>
        n.id === ENV
          ? { ...n, apiUrl: fake.url, publicBaseUrl: red.url('').replace(/\/$/, ''), credentials: { accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN, token } }
          : n,
      ),
    );
    const person = '+15551234567';
    const ours = '+15557654321';
    should((await red.admin('POST', `/inject/${INJECT}`)).status).equal(200);
    const waiting = await sessionWhen(red, ENV, person, ours, (s) => s.waitingAt?.nodeId === 'csdn0000000000d1', 'the notice to wait');
    should(fake.messagesTo(person)[0].Body).equal('Hi Ann, your parcel A-1047 arrives today, 2-4 pm. Reply YES to confirm or LATER to rearrange.');
    // Twilio reports the notice undelivered: the Session leaves the InputTask on its error branch.
    const [sid] = fake.sidsTo(person);
    const path = `/api/TelcoModule/Messaging/status/${token}`;
    const form = { MessageSid: sid, MessageStatus: 'undelivered', ErrorCode: '30005', To: person, From: ours, AccountSid: ACCOUNT_SID };
    const res = await red.request('POST', path, new URLSearchParams(form).toString(), {
      'Content-Type': 'application/x-www-form-urlencoded',
      'X-Twilio-Signature': twilio.getExpectedTwilioSignature(AUTH_TOKEN, red.url(path), form),
    });
    should(res.status).equal(200);
    const ended = await sessionWhen(red, ENV, person, ours, (s) => s.id === waiting.id && s.state === 'completed', 'the undelivered branch');
    should(ended.vars.undelivered).match(/undelivered \(provider error 30005\)/);

    // The next notice to the same person opens a new Session; the reply completes it.
    should((await red.admin('POST', `/inject/${INJECT}`)).status).equal(200);
    await sessionWhen(red, ENV, person, ours, (s) => s.id !== waiting.id && s.state === 'waiting', 'the second notice to wait');
    await postInbound(red, token, inboundForm(person, ours, 'YES'));
    await eventually(() => fake.messagesTo(person).find((m) => m.Body === 'Thanks Ann, noted: YES.'), 5000, 'the thanks');
  });
});
