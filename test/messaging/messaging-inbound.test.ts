import { chain, node, tab, uid, type FlowNode } from '../harness/flows';
import { NodeRed, eventually } from '../harness/node-red';
import { FakeTwilioMessagingApi } from '../fakes/twilio-messaging-api';
import {
  ACCOUNT_SID,
  AUTH_TOKEN,
  INBOUND,
  SIGNING_SECRET,
  assertEmptyTwiml,
  inboundForm,
  messagingEnvironment,
  postInbound,
  sessionWhen,
  sessionsOf,
} from '../fakes/twilio-messaging-webhooks';
import twilio from 'twilio';
import should from 'should';

const OURS = '+15550001000';
const OURS_2 = '+15550002000';
const WA_OURS = 'whatsapp:+14155238886';

/** The inbound webhook: signature, answers, one Session per number pair, redelivery, bad input. */
describe('messaging inbound webhook', function () {
  let red: NodeRed;
  let fake: FakeTwilioMessagingApi;
  const token = 'tok-inbound-' + uid();
  const openToken = 'tok-nosig-' + uid();
  const secretToken = 'tok-secret-' + uid();
  const env = 'envIn';

  before(async function () {
    fake = await FakeTwilioMessagingApi.start(ACCOUNT_SID, AUTH_TOKEN);
    red = await NodeRed.start();
    const z = uid('tab');
    const flows: FlowNode[] = [
      messagingEnvironment(env, token, fake, red),
      messagingEnvironment('envOpen', openToken, fake, red, { validateSignatures: false }),
      messagingEnvironment('envSecret', secretToken, fake, red, {}, { webhookSigningSecret: SIGNING_SECRET }),
      tab(z, 'Survey'),
      ...chain(z, [
        ['telco-sms-start', 'smsStart', { environment: env, variable: 'message' }],
        ['output-task', 'smsHello', { text: 'Hi {message.from}, you wrote "{message.text}" to {message.to}' }],
        ['input-task', 'smsA', { prompt: '', resultVariable: 'a' }],
        ['input-task', 'smsB', { prompt: '', resultVariable: 'b' }],
        ['input-task', 'smsC', { prompt: '', resultVariable: 'c' }],
        ['output-task', 'smsAll', { text: 'got {message.text},{a},{b},{c}' }],
        ['end-task', 'smsEnd'],
      ]),
      ...chain(z, [
        ['telco-messenger-start', 'waStart', { environment: env, variable: 'message' }],
        ['input-task', 'waIn', { prompt: 'Hello {message.profileName}, your name?', resultVariable: 'name' }],
        ['output-task', 'waBye', { text: 'Bye {name}' }],
        ['end-task', 'waEnd'],
      ]),
      node('session-start', 'openStart', z, { messaging: 'envOpen' }, [['openIn']]),
      // The shared Start's first message answers a first InputTask (SPEC 4.4 rule 5): say it instead.
      node('output-task', 'openIn', z, { text: 'open' }, [['openEnd'], []]),
      node('end-task', 'openEnd', z, {}),
      node('session-start', 'secretStart', z, { messaging: 'envSecret' }, [['secretIn']]),
      node('output-task', 'secretIn', z, { text: 'secret ok' }, [['secretEnd'], []]),
      node('end-task', 'secretEnd', z, {}),
    ];
    await red.deploy(flows);
  });
  after(async function () {
    await red?.close();
    await fake?.close();
  });

  it('answers empty TwiML at once and starts an SMS Session with every {message} field', async function () {
    const user = '+15551110001';
    const form = inboundForm(user, OURS, 'hello', { ProfileName: 'Ignored On Sms' });
    const res = await postInbound(red, token, form);
    should(res.status).equal(200);
    assertEmptyTwiml(res);
    const session = await sessionWhen(red, env, user, OURS, (s) => s.waitingAt?.nodeId === 'smsA', 'the SMS Session to wait at smsA');
    should(session.channel).equal('TelcoMessagingSms');
    should(session.vars.message).eql({
      text: 'hello',
      files: { count: 0, names: '' },
      from: user,
      to: OURS,
      messageId: form.MessageSid,
      profileName: '',
      channel: 'TelcoMessagingSms',
      isTest: false,
    });
    should(session.vars.execution.channelSender).equal(user);
    should(session.vars.execution.channelRecipient).equal(OURS);
    const sent = fake.messagesTo(user);
    should(sent.length).equal(1, 'the empty InputTask prompt sends nothing');
    should({ From: sent[0].From, Body: sent[0].Body }).eql({ From: OURS, Body: `Hi ${user}, you wrote "hello" to ${OURS}` });
    const auth = fake.requests.find((r) => r.form.To === user)?.authorization;
    should(auth).equal('Basic ' + Buffer.from(`${ACCOUNT_SID}:${AUTH_TOKEN}`).toString('base64'));
  });

  it('starts a messenger Session with the whatsapp: prefix kept literally and the profile name', async function () {
    const user = 'whatsapp:+447700900001';
    const form = inboundForm(user, WA_OURS, 'hola', { ProfileName: 'Ann', WaId: '447700900001' });
    assertEmptyTwiml(await postInbound(red, token, form));
    const session = await sessionWhen(red, env, user, WA_OURS, (s) => s.waitingAt?.nodeId === 'waIn', 'the messenger Session');
    should(session.channel).equal('TelcoMessagingMessenger');
    should(session.vars.message).eql({
      text: 'hola',
      files: { count: 0, names: '' },
      from: user,
      to: WA_OURS,
      messageId: form.MessageSid,
      profileName: 'Ann',
      channel: 'TelcoMessagingMessenger',
      isTest: false,
    });
    should(fake.messagesTo(user).map((m) => [m.From, m.Body])).eql([[WA_OURS, 'Hello Ann, your name?']]);
    await postInbound(red, token, inboundForm(user, WA_OURS, 'Ann B'));
    const done = await sessionWhen(red, env, user, WA_OURS, (s) => s.state === 'completed', 'the messenger Session to complete');
    should(done.vars.name).equal('Ann B');
    should(fake.messagesTo(user).map((m) => m.Body)).eql(['Hello Ann, your name?', 'Bye Ann B'], 'EndTask sends nothing');
  });

  it('refuses a bad signature with 403 and 4020 in the log, and runs nothing', async function () {
    const user = '+15551110002';
    const res = await postInbound(red, token, inboundForm(user, OURS, 'forged'), 'not-the-auth-token');
    should(res.status).equal(403);
    await red.waitForLog(/4020 WebhookSignatureInvalid: inbound webhook refused \(signature does not match/);
    const unsigned = await red.request('POST', INBOUND + token, new URLSearchParams(inboundForm(user, OURS, 'x')).toString(), {
      'Content-Type': 'application/x-www-form-urlencoded',
    });
    should(unsigned.status).equal(403);
    await red.waitForLog(/4020 WebhookSignatureInvalid: inbound webhook refused \(no X-Twilio-Signature header/);
    should((await sessionsOf(red, env, user, OURS)).length).equal(0);
    should(fake.messagesTo(user).length).equal(0);
    should(red.logs.filter((l) => l.includes('4020')).some((l) => l.includes(token))).be.false('the token never shows in the 4020 log line');
  });

  it('checks the signature with the Webhook Signing Secret when one is set', async function () {
    const user = '+15551110003';
    should((await postInbound(red, secretToken, inboundForm(user, OURS, 'with auth token'))).status).equal(403);
    should((await postInbound(red, secretToken, inboundForm(user, OURS, 'with secret'), SIGNING_SECRET)).status).equal(200);
    await eventually(() => fake.messagesTo(user).some((m) => m.Body === 'secret ok'), 5000, 'the prompt');
  });

  it('skips the check when Validate Signatures is off', async function () {
    const user = '+15551110004';
    const res = await red.request('POST', INBOUND + openToken, new URLSearchParams(inboundForm(user, OURS, 'unsigned')).toString(), {
      'Content-Type': 'application/x-www-form-urlencoded',
    });
    should(res.status).equal(200);
    await eventually(() => fake.messagesTo(user).some((m) => m.Body === 'open'), 5000, 'the prompt');
  });

  it('answers 404 to an unknown token and starts nothing', async function () {
    const form = inboundForm('+15551110005', OURS, 'hi');
    const res = await postInbound(red, 'no-such-token', form);
    should(res.status).equal(404);
    should(fake.messagesTo('+15551110005').length).equal(0);
  });

  it('handles a redelivered MessageSid once', async function () {
    const user = '+15551110006';
    const form = inboundForm(user, OURS, 'first');
    assertEmptyTwiml(await postInbound(red, token, form));
    assertEmptyTwiml(await postInbound(red, token, form));
    assertEmptyTwiml(await postInbound(red, token, { ...form }));
    const session = await sessionWhen(red, env, user, OURS, (s) => s.waitingAt?.nodeId === 'smsA', 'the Session');
    await postInbound(red, token, inboundForm(user, OURS, 'second'));
    const next = await sessionWhen(red, env, user, OURS, (s) => s.waitingAt?.nodeId === 'smsB', 'the second message');
    should(next.id).equal(session.id);
    should(next.vars.a).equal('second', 'the redelivered "first" did not answer smsA');
    should((await sessionsOf(red, env, user, OURS)).length).equal(1);
  });

  it('answers 400 and logs 4012 when the sender or recipient is missing', async function () {
    const form = inboundForm('+15551110007', OURS, 'no recipient');
    delete form.To;
    const res = await postInbound(red, token, form);
    should(res.status).equal(400);
    await red.waitForLog(new RegExp(`4012 ModuleInvalidData: inbound message ${form.MessageSid} ignored: the message has no To`));
    const noFrom = inboundForm('', OURS, 'no sender');
    should((await postInbound(red, token, noFrom)).status).equal(400);
    await red.waitForLog(/4012 ModuleInvalidData: .*the message has no From/);
    should(fake.messagesTo('+15551110007').length).equal(0);
  });

  it('logs 4009 and starts nothing for a message with neither text nor files', async function () {
    const user = '+15551110008';
    const form = inboundForm(user, OURS, '');
    assertEmptyTwiml(await postInbound(red, token, form));
    await red.waitForLog(new RegExp(`4009 ModuleInputEmpty: message ${form.MessageSid} from \\${user} has neither text nor files`));
    should((await sessionsOf(red, env, user, OURS)).length).equal(0);
  });

  it('gives one user writing to two of our numbers two Sessions', async function () {
    const user = '+15551110009';
    await postInbound(red, token, inboundForm(user, OURS, 'to one'));
    await postInbound(red, token, inboundForm(user, OURS_2, 'to two'));
    const one = await sessionWhen(red, env, user, OURS, (s) => s.waitingAt?.nodeId === 'smsA', 'Session one');
    const two = await sessionWhen(red, env, user, OURS_2, (s) => s.waitingAt?.nodeId === 'smsA', 'Session two');
    should(one.id).not.equal(two.id);
    should(
      fake
        .messagesTo(user)
        .map((m) => m.From)
        .sort(),
    ).eql([OURS, OURS_2], 'each replies from the number written to');
  });

  it('ignores a delivery-status callback posted to the inbound URL', async function () {
    const user = '+15551110010';
    const params = { MessageSid: 'SM' + 'f'.repeat(32), MessageStatus: 'delivered', SmsStatus: 'delivered', To: user, From: OURS, AccountSid: ACCOUNT_SID };
    const signature = twilio.getExpectedTwilioSignature(AUTH_TOKEN, red.url(INBOUND + token), params);
    const res = await red.request('POST', INBOUND + token, new URLSearchParams(params).toString(), {
      'Content-Type': 'application/x-www-form-urlencoded',
      'X-Twilio-Signature': signature,
    });
    assertEmptyTwiml(res);
    should((await sessionsOf(red, env, OURS, user)).length).equal(0);
  });

  it('keeps order and never double-starts under a burst: 50 numbers x 4 messages', async function () {
    const users = Array.from({ length: 50 }, (_, i) => `+1555300${String(i).padStart(4, '0')}`);
    await Promise.all(
      users.map(async (user) => {
        for (const n of [1, 2, 3, 4]) {
          const res = await postInbound(red, token, inboundForm(user, OURS, `m${n}`));
          should(res.status).equal(200);
        }
      }),
    );
    await eventually(() => users.every((u) => fake.messagesTo(u).length === 2), 30000, 'every burst Session to finish');
    for (const user of users) {
      const sessions = await sessionsOf(red, env, user, OURS);
      should(sessions.length).equal(1, `one Session for ${user}`);
      should(sessions[0].state).equal('completed');
      should(fake.messagesTo(user)[1].Body).equal('got m1,m2,m3,m4', `messages of ${user} in order`);
    }
  });

  it("starts one Session when one number's 4 messages arrive all at once, each message used exactly once", async function () {
    const users = Array.from({ length: 20 }, (_, i) => `+1555400${String(i).padStart(4, '0')}`);
    await Promise.all(
      users.flatMap((user) =>
        [1, 2, 3, 4].map(async (n) => {
          should((await postInbound(red, token, inboundForm(user, OURS, `c${n}`))).status).equal(200);
        }),
      ),
    );
    await eventually(() => users.every((u) => fake.messagesTo(u).length === 2), 30000, 'every Session to finish');
    for (const user of users) {
      should((await sessionsOf(red, env, user, OURS)).length).equal(1, `one Session for ${user}`);
      const got = String(fake.messagesTo(user)[1].Body).replace(/^got /, '').split(',').sort();
      should(got).eql(['c1', 'c2', 'c3', 'c4']);
    }
  });
});
