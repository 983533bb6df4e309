import should from 'should';
import { chain, node, tab, uid } from '../harness/flows';
import { NodeRed } from '../harness/node-red';
import { FakeTwilioMessagingApi } from '../fakes/twilio-messaging-api';
import { ACCOUNT_SID, AUTH_TOKEN, INBOUND, inboundForm, messagingEnvironment, postInbound, sessionWhen } from '../fakes/twilio-messaging-webhooks';

const OURS = '+15550001000';
const WA_OURS = 'whatsapp:+14155238886';
const CONTENT_SID = 'HX' + '0'.repeat(31) + '1';

/** Tasks on the messaging Channels: buttons, provider refusals, missing configuration, test chat. */
describe('messaging tasks', function () {
  let red: NodeRed;
  let fake: FakeTwilioMessagingApi;
  const tokens = {
    b: 'tok-b-' + uid(),
    bad: 'tok-bad-' + uid(),
    nocred: 'tok-nocred-' + uid(),
    only: 'tok-only-' + uid(),
    typed: 'tok-typed-' + uid(),
    typedBad: 'tok-typedbad-' + uid(),
  };

  before(async function () {
    fake = await FakeTwilioMessagingApi.start(ACCOUNT_SID, AUTH_TOKEN);
    red = await NodeRed.start();
    const z = uid('tab');
    const y = uid('tab');
    const x = uid('tab');
    const w = uid('tab');
    const v = uid('tab');
    const u = uid('tab');
    await red.deploy([
      messagingEnvironment('envB', tokens.b, fake, red),
      messagingEnvironment('envBad', tokens.bad, fake, red),
      messagingEnvironment('envNoCred', tokens.nocred, fake, red, { validateSignatures: false }, { authToken: '' }),
      messagingEnvironment('envOnly', tokens.only, fake, red),
      messagingEnvironment('envTyped', tokens.typed, fake, red),
      messagingEnvironment('envTypedBad', tokens.typedBad, fake, red),
      tab(z, 'Buttons'),
      node('telco-messenger-start', 'bWa', z, { environment: 'envB', testData: { from: '+447700900999', to: '+14155238886', profileName: 'Tess' } }, [
        ['bButtons'],
      ]),
      node('telco-sms-start', 'bSms', z, { environment: 'envB', testData: { from: '+15557770000', text: 'sms test' } }, [['bButtons']]),
      node(
        'telco-messenger-buttons',
        'bButtons',
        z,
        {
          contentSid: CONTENT_SID,
          previewText: 'Pick one, {message.profileName}',
          resultVariable: 'choice',
          variables: [
            { index: '1', value: '{message.profileName}' },
            { index: '2', value: 'fixed' },
          ],
        },
        [['bSay'], ['bFallback']],
      ),
      node('output-task', 'bSay', z, { text: 'chose {choice.payload}|{choice.text}|{choice.message}|{choice.tapped}' }, [['bEnd'], []]),
      node('output-task', 'bFallback', z, { text: 'fallback {error.code}' }, [['bEnd'], []]),
      node('end-task', 'bEnd', z, {}),
      tab(y, 'Bad SID'),
      node('telco-messenger-start', 'badStart', y, { environment: 'envBad' }, [['badButtons']]),
      node('telco-messenger-buttons', 'badButtons', y, { contentSid: 'HX1234', resultVariable: 'choice' }, [[], ['badOut']]),
      node('output-task', 'badOut', y, { text: 'error {error.code}: {error.message}' }, [['badEmpty'], []]),
      node('output-task', 'badEmpty', y, { text: '{nothing.here}' }, [[], ['badReject']]),
      node('output-task', 'badReject', y, { text: 'empty was {error.code}' }, [['badEnd'], []]),
      node('end-task', 'badEnd', y, {}),
      tab(x, 'No credentials'),
      ...chain(x, [
        ['telco-sms-start', 'ncStart', { environment: 'envNoCred' }],
        ['output-task', 'ncOut', { text: 'hello' }],
        ['end-task', 'ncEnd'],
      ]),
      tab(w, 'SMS only'),
      ...chain(w, [
        ['telco-sms-start', 'onlyStart', { environment: 'envOnly' }],
        ['output-task', 'onlyOut', { text: 'hi {message.text}' }],
        ['end-task', 'onlyEnd'],
      ]),
      // Content SID typed as msg: a change node sets msg.template before the Task.
      tab(v, 'Typed Content SID'),
      node('telco-messenger-start', 'tyStart', v, { environment: 'envTyped' }, [['tySet']]),
      node('change', 'tySet', v, { rules: [{ t: 'set', p: 'template', pt: 'msg', to: CONTENT_SID, tot: 'str' }] }, [['tyButtons']]),
      node('telco-messenger-buttons', 'tyButtons', v, { contentSid: 'template', contentSidType: 'msg', previewText: 'typed', resultVariable: 'choice' }, [
        ['tyEnd'],
        [],
      ]),
      node('end-task', 'tyEnd', v, {}),
      tab(u, 'Typed Content SID, bad'),
      node('telco-messenger-start', 'tbStart', u, { environment: 'envTypedBad' }, [['tbSet']]),
      node('change', 'tbSet', u, { rules: [{ t: 'set', p: 'template', pt: 'msg', to: 'HX{sid}', tot: 'str' }] }, [['tbButtons']]),
      node('telco-messenger-buttons', 'tbButtons', u, { contentSid: 'template', contentSidType: 'msg', resultVariable: 'choice' }, [[], ['tbOut']]),
      node('output-task', 'tbOut', u, { text: 'error {error.code}: {error.message}' }, [['tbEnd'], []]),
      node('end-task', 'tbEnd', u, {}),
    ]);
  });
  after(async function () {
    await red?.close();
    await fake?.close();
  });

  it('sends the buttons template with its content variables and stores a tapped answer', async function () {
    const user = 'whatsapp:+447700900201';
    await postInbound(red, tokens.b, inboundForm(user, WA_OURS, 'start', { ProfileName: 'Ann' }));
    const waiting = await sessionWhen(red, 'envB', user, WA_OURS, (s) => s.waitingAt?.nodeId === 'bButtons', 'the buttons wait');
    const [template] = fake.messagesTo(user);
    should(template).eql({
      To: user,
      From: WA_OURS,
      ContentSid: CONTENT_SID,
      ContentVariables: '{"1":"Ann","2":"fixed"}',
      StatusCallback: red.url('/api/TelcoModule/Messaging/status/' + tokens.b),
    });
    const line = waiting.history.at(-1);
    should([line.from, line.kind, line.text]).eql(['bot', 'buttons', 'Pick one, Ann']);
    await postInbound(
      red,
      tokens.b,
      inboundForm(user, WA_OURS, 'Yes please', {
        ButtonPayload: 'yes_id',
        ButtonText: 'Yes please',
        MessageType: 'button',
        OriginalRepliedMessageSid: 'SM' + '9'.repeat(32),
      }),
    );
    const done = await sessionWhen(red, 'envB', user, WA_OURS, (s) => s.state === 'completed', 'the answer');
    should(done.vars.choice).eql({ payload: 'yes_id', text: 'Yes please', message: 'Yes please', tapped: true });
    should(fake.messagesTo(user).at(-1)?.Body).equal('chose yes_id|Yes please|Yes please|true');
  });

  it('stores typed text as the payload when the user types instead of tapping', async function () {
    const user = 'whatsapp:+447700900202';
    await postInbound(red, tokens.b, inboundForm(user, WA_OURS, 'start'));
    await sessionWhen(red, 'envB', user, WA_OURS, (s) => s.waitingAt?.nodeId === 'bButtons', 'the buttons wait');
    await postInbound(red, tokens.b, inboundForm(user, WA_OURS, 'maybe later'));
    const done = await sessionWhen(red, 'envB', user, WA_OURS, (s) => s.state === 'completed', 'the answer');
    should(done.vars.choice).eql({ payload: 'maybe later', text: 'maybe later', message: 'maybe later', tapped: false });
  });

  it('refuses buttons on the SMS Channel with 3005 (the error branch gives a text alternative)', async function () {
    const user = '+15551300001';
    await postInbound(red, tokens.b, inboundForm(user, OURS, 'start'));
    const done = await sessionWhen(red, 'envB', user, OURS, (s) => s.state === 'completed', 'the fallback');
    should(fake.messagesTo(user).map((m) => m.Body)).eql(['fallback 3005']);
    should(done.log.find((e: any) => e.code === 3005).message).match(/Buttons need a messenger Session; this one is on TelcoMessagingSms/);
    should(fake.messagesTo(user).some((m) => m.ContentSid)).be.false();
  });

  it('refuses a Content SID that is not HX + 32 characters with 3005 before sending; an empty OutputTask is 3005 too', async function () {
    const user = 'whatsapp:+447700900203';
    await postInbound(red, tokens.bad, inboundForm(user, WA_OURS, 'start'));
    await sessionWhen(red, 'envBad', user, WA_OURS, (s) => s.state === 'completed', 'the error branch');
    const bodies = fake.messagesTo(user).map((m) => m.Body);
    should(bodies).eql(['error 3005: Content SID "HX1234" is not HX followed by 32 characters; nothing was sent', 'empty was 3005']);
    should(fake.messagesTo(user).some((m) => m.ContentSid)).be.false();
  });

  it('sends the template whose Content SID a change node put in msg (typed msg field)', async function () {
    const user = 'whatsapp:+447700900221';
    await postInbound(red, tokens.typed, inboundForm(user, WA_OURS, 'start'));
    await sessionWhen(red, 'envTyped', user, WA_OURS, (s) => s.waitingAt?.nodeId === 'tyButtons', 'the buttons wait');
    should(fake.messagesTo(user)).eql([
      { To: user, From: WA_OURS, ContentSid: CONTENT_SID, StatusCallback: red.url('/api/TelcoModule/Messaging/status/' + tokens.typed) },
    ]);
  });

  it('refuses a Content SID from msg that is not HX + 32 characters with 3005, used as is and sending nothing', async function () {
    const user = 'whatsapp:+447700900222';
    await postInbound(red, tokens.typedBad, inboundForm(user, WA_OURS, 'start'));
    await sessionWhen(red, 'envTypedBad', user, WA_OURS, (s) => s.state === 'completed', 'the error branch');
    should(fake.messagesTo(user).map((m) => m.Body)).eql(['error 3005: Content SID "HX{sid}" is not HX followed by 32 characters; nothing was sent']);
    should(fake.messagesTo(user).some((m) => m.ContentSid)).be.false();
  });

  it("takes 4001 with the provider's reason when it rejects a message", async function () {
    const user = '+15551300002';
    fake.rejectTo.add(user);
    await postInbound(red, tokens.only, inboundForm(user, OURS, 'hello'));
    const ended = await sessionWhen(red, 'envOnly', user, OURS, (s) => s.state === 'ended', 'the Session to end');
    should(ended.error.code).equal(4001);
    should(ended.error.message).match(
      /^Twilio rejected the message to \+15551300002: The 'To' number \+15551300002 is not a valid phone number\. \(Twilio error 21211, HTTP 400\)$/,
    );
  });

  it('stops with 4008 when the Auth Token is missing, sending nothing', async function () {
    const user = '+15551300003';
    const res = await red.request('POST', INBOUND + tokens.nocred, new URLSearchParams(inboundForm(user, OURS, 'hi')).toString(), {
      'Content-Type': 'application/x-www-form-urlencoded',
    });
    should(res.status).equal(200);
    const ended = await sessionWhen(red, 'envNoCred', user, OURS, (s) => s.state === 'ended', 'the Session to end');
    should(ended.error.code).equal(4008);
    should(ended.error.message).match(/Auth Token not set in the messaging Environment "env envNoCred"/);
    should(fake.messagesTo(user).length).equal(0);
  });

  it('ends with 8025 when a messenger message reaches a Process that has only an SMS start', async function () {
    const user = 'whatsapp:+447700900204';
    await postInbound(red, tokens.only, inboundForm(user, WA_OURS, 'hello'));
    const ended = await sessionWhen(red, 'envOnly', user, WA_OURS, (s) => s.state === 'ended', 'the Session to end');
    should(ended.error.code).equal(8025);
    should(fake.messagesTo(user).length).equal(0);
  });

  describe('test chat', function () {
    async function startTest(start: string, testData?: Record<string, unknown>) {
      const res = await red.admin('POST', '/channel-sessions/test-sessions', { start, testData });
      should(res.status).equal(201, res.text);
      return res.body;
    }
    async function say(id: string, text: string, files?: unknown[]) {
      const res = await red.admin('POST', `/channel-sessions/test-sessions/${id}/messages`, { text, files });
      should(res.status).equal(200, res.text);
      return res.body;
    }

    it('writes {message} from the SMS start test data at once', async function () {
      const started = await startTest('bSms');
      should(started.vars.message).eql({
        text: 'sms test',
        files: { count: 0, names: '' },
        from: '+15557770000',
        to: '',
        messageId: '',
        profileName: '',
        channel: 'Chat',
        isTest: true,
      });
      should(started.vars.execution.channelSender).equal('+15557770000');
    });

    it('prefixes messenger addresses, asks for the opening message without text, and previews buttons', async function () {
      const started = await startTest('bWa');
      should(started.waitingAt.nodeId).equal('bWa', 'without a text the start waits for the opening message');
      should(started.transcript.at(-1).kind).equal('prompt');
      const data = Buffer.from('a photo').toString('base64');
      const opened = await say(started.id, 'hi from chat', [{ name: 'photo.jpg', type: 'image/jpeg', data }]);
      should(opened.vars.message.text).equal('hi from chat');
      should(opened.vars.message.from).equal('whatsapp:+447700900999');
      should(opened.vars.message.to).equal('whatsapp:+14155238886');
      should(opened.vars.message.profileName).equal('Tess');
      should(opened.vars.message.files.count).equal(1);
      should(opened.waitingAt.nodeId).equal('bButtons');
      const preview = opened.transcript.find((l: any) => l.kind === 'buttons');
      should(preview.text).equal('Pick one, Tess');
      const done = await say(started.id, 'option B');
      should(done.vars.choice).eql({ payload: 'option B', text: 'option B', message: 'option B', tapped: false });
      should(done.state).equal('completed');
      should(fake.messages().filter((m) => String(m.To).includes('447700900999')).length).equal(0, 'the test chat sends nothing to the provider');
    });
  });
});
