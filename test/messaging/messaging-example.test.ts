import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import should from 'should';
import { NodeRed, REPO_ROOT } from '../harness/node-red';
import { FakeTwilioMessagingApi } from '../fakes/twilio-messaging-api';
import { ACCOUNT_SID, AUTH_TOKEN, inboundForm, postInbound, sessionWhen } from '../fakes/twilio-messaging-webhooks';

const EXAMPLE = join(REPO_ROOT, 'examples', 'SMS and WhatsApp survey.json');
const ENV = 'cssv000000000002';

/** The example flow deploys as shipped, runs in the test chat, and takes the SMS / WhatsApp paths. */
describe('example: SMS and WhatsApp survey', function () {
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

  async function say(id: string, text: string, files?: unknown[]) {
    const res = await red.admin('POST', `/channel-sessions/test-sessions/${id}/messages`, { text, files });
    should(res.status).equal(200, res.text);
    return res.body;
  }

  it('deploys as is and runs the WhatsApp path in the test chat', async function () {
    await red.deploy(flow);
    await red.waitForLog(/\[telco-messaging-environment:Survey numbers\] No token: open this Environment in the editor/);
    should(red.logs.some((l) => /\[error\]/.test(l))).be.false(red.logs.filter((l) => /\[error\]/.test(l)).join('\n'));
    const res = await red.admin('POST', '/channel-sessions/test-sessions', { start: 'cssv0000000000a1' });
    should(res.status).equal(201, res.text);
    const started = res.body;
    should(started.transcript.map((l: any) => [l.kind, l.text])).eql([
      ['message', 'Hi'],
      ['message', 'Hello! Two quick questions about your last visit.'],
      ['buttons', 'Hi Ann, would you recommend us? [Yes] [No]'],
    ]);
    const asked = await say(started.id, 'yes');
    should(asked.transcript.at(-1).text).equal('What could we do better? You can send a photo too.');
    const done = await say(started.id, 'faster service', [{ name: 'receipt.jpg', type: 'image/jpeg', data: Buffer.from('img').toString('base64') }]);
    should(done.state).equal('completed');
    should(done.transcript.filter((l: any) => l.from === 'bot').at(-1).text).equal('Thanks! You said "yes" and "faster service" (files received: 1).');
  });

  it('greets "there" when WhatsApp gives no profile name, never "Would you recommend us, ?"', async function () {
    await red.deploy(flow);
    const res = await red.admin('POST', '/channel-sessions/test-sessions', {
      start: 'cssv0000000000a1',
      testData: { from: '+447700900123', text: 'Hi', profileName: '' },
    });
    should(res.status).equal(201, res.text);
    should(res.body.transcript.at(-1)).containEql({ kind: 'buttons', text: 'Hi there, would you recommend us? [Yes] [No]' });
  });

  it('asks by text on SMS and by template on WhatsApp once configured', async function () {
    const token = 'tok-example-survey';
    const configured = flow.map((n) =>
      n.id === ENV
        ? { ...n, apiUrl: fake.url, publicBaseUrl: red.url('').replace(/\/$/, ''), credentials: { accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN, token } }
        : n,
    );
    await red.deploy(configured);
    const sms = '+15551500001';
    await postInbound(red, token, inboundForm(sms, '+15550001000', 'hi'));
    await sessionWhen(red, ENV, sms, '+15550001000', (s) => s.waitingAt?.nodeId === 'cssv0000000000d2', 'the text question');
    should(fake.messagesTo(sms).map((m) => m.Body)).eql(['Hello! Two quick questions about your last visit.', 'Would you recommend us? Reply YES or NO.']);
    await postInbound(red, token, inboundForm(sms, '+15550001000', 'YES'));
    await sessionWhen(red, ENV, sms, '+15550001000', (s) => s.waitingAt?.nodeId === 'cssv0000000000f1', 'the feedback question');
    await postInbound(red, token, inboundForm(sms, '+15550001000', 'nothing'));
    await sessionWhen(red, ENV, sms, '+15550001000', (s) => s.state === 'completed', 'the end');
    should(fake.messagesTo(sms).at(-1)?.Body).equal('Thanks! You said "YES" and "nothing" (files received: 0).');

    const wa = 'whatsapp:+447700900401';
    await postInbound(red, token, inboundForm(wa, 'whatsapp:+14155238886', 'hi', { ProfileName: 'Ann' }));
    await sessionWhen(red, ENV, wa, 'whatsapp:+14155238886', (s) => s.waitingAt?.nodeId === 'cssv0000000000d1', 'the buttons');
    const template = fake.messagesTo(wa).at(-1)!;
    should([template.ContentSid, template.ContentVariables]).eql(['HX00000000000000000000000000000000', '{"1":"Ann"}']);

    const nameless = 'whatsapp:+447700900402';
    await postInbound(red, token, inboundForm(nameless, 'whatsapp:+14155238886', 'hi'));
    await sessionWhen(red, ENV, nameless, 'whatsapp:+14155238886', (s) => s.waitingAt?.nodeId === 'cssv0000000000d1', 'the buttons');
    should(fake.messagesTo(nameless).at(-1)?.ContentVariables).equal('{"1":"there"}');
  });
});
