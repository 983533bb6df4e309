import twilio from 'twilio';
import should from 'should';
import { node, tab, uid, type FlowNode } from '../harness/flows';
import { eventually, NodeRed, type HttpResult } from '../harness/node-red';
import { FakeTwilioMessagingApi } from '../fakes/twilio-messaging-api';
import { ACCOUNT_SID, AUTH_TOKEN, inboundForm, messagingEnvironment, postInbound, sessionWhen, sessionsOf } from '../fakes/twilio-messaging-webhooks';

const OURS = '+15550003000';
const WA_OURS = 'whatsapp:+14155230000';
const STATUS = '/api/TelcoModule/Messaging/status/';
const CONTENT_SID = 'HX' + 'fedcba9876543210'.repeat(2);

/** Posts a message status the way Twilio signs it. */
function postStatus(red: NodeRed, token: string, params: Record<string, string>, key = AUTH_TOKEN): Promise<HttpResult> {
  const path = STATUS + token;
  const signature = twilio.getExpectedTwilioSignature(key, red.url(path), params);
  return red.request('POST', path, new URLSearchParams(params).toString(), {
    'Content-Type': 'application/x-www-form-urlencoded',
    'X-Twilio-Signature': signature,
  });
}

function statusForm(sid: string, status: string, to: string, from: string, errorCode?: string): Record<string, string> {
  return {
    MessageSid: sid,
    SmsSid: sid,
    MessageStatus: status,
    SmsStatus: status,
    To: to,
    From: from,
    AccountSid: ACCOUNT_SID,
    ApiVersion: '2010-04-01',
    ...(errorCode ? { ErrorCode: errorCode } : {}),
  };
}

/**
 * An `http in` route that feeds a Text out node: the JSON body's `to`, `from`, `vars` and `text`
 * become msg.to, msg.from, msg.vars and msg.payload; output 2 writes `OUT2 <id> <msg.error>` to the log.
 */
function feed(z: string, p: string, path: string, outProps: Record<string, unknown>, next: string): FlowNode[] {
  return [
    node('http in', `${p}In`, z, { url: path, method: 'post' }, [[`${p}Set`, `${p}Ok`]]),
    node('http response', `${p}Ok`, z, { statusCode: '202' }),
    node(
      'change',
      `${p}Set`,
      z,
      {
        rules: [
          { t: 'set', p: 'to', pt: 'msg', to: 'payload.to', tot: 'msg' },
          { t: 'set', p: 'from', pt: 'msg', to: 'payload.from', tot: 'msg' },
          { t: 'set', p: 'vars', pt: 'msg', to: 'payload.vars', tot: 'msg' },
          { t: 'set', p: 'payload', pt: 'msg', to: 'payload.text', tot: 'msg' },
          { t: 'delete', p: 'req', pt: 'msg' },
          { t: 'delete', p: 'res', pt: 'msg' },
        ],
      },
      [[`${p}Out`]],
    ),
    node('telco-message-out', `${p}Out`, z, outProps, [[next], [`${p}Err`]]),
    node('function', `${p}Err`, z, { func: `node.warn('OUT2 ${p} ' + JSON.stringify(msg.error)); return null;`, outputs: 1 }, [[]]),
  ];
}

/** Text out: opens the pair's SMS or WhatsApp Session toward a person; statuses; the WhatsApp window. */
describe('Text out (telco-message-out)', function () {
  let red: NodeRed;
  let fake: FakeTwilioMessagingApi;
  const tokens = { sms: 'tok-to-sms-' + uid(), wa: 'tok-to-wa-' + uid(), nocred: 'tok-to-nc-' + uid(), noscheme: 'tok-to-ns-' + uid() };
  const paths = { sms: '/' + uid('textout'), wa: '/' + uid('waout'), tpl: '/' + uid('tplout'), nocred: '/' + uid('ncout'), noscheme: '/' + uid('nsout') };

  async function textOut(path: string, body: Record<string, unknown>): Promise<void> {
    const res = await red.request('POST', path, JSON.stringify(body), { 'Content-Type': 'application/json' });
    should(res.status).eql(202);
  }

  function out2(p: string): string[] {
    return red.logs.filter((l) => l.includes(`OUT2 ${p} `));
  }

  before(async function () {
    fake = await FakeTwilioMessagingApi.start(ACCOUNT_SID, AUTH_TOKEN);
    red = await NodeRed.start();
    const z = uid('tab');
    const w = uid('tab');
    const t = uid('tab');
    const y = uid('tab');
    await red.deploy([
      messagingEnvironment('toEnvS', tokens.sms, fake, red),
      messagingEnvironment('toEnvW', tokens.wa, fake, red),
      messagingEnvironment('toEnvN', tokens.nocred, fake, red, {}, { authToken: '' }),
      // An API URL without its scheme ("localhost:3000" reads as the scheme "localhost:").
      messagingEnvironment('toEnvU', tokens.noscheme, fake, red, { apiUrl: 'localhost:3000' }),
      tab(z, 'Delivery notice'),
      ...feed(z, 's', paths.sms, { environment: 'toEnvS' }, 'sNotice'),
      node('output-task', 'sNotice', z, { text: 'Parcel {order} arrives today ({message.text}, {message.direction}). Reply YES.' }, [['sAsk'], ['sEnd']]),
      node('input-task', 'sAsk', z, { prompt: '', resultVariable: 'answer' }, [['sThanks'], ['sEnd']]),
      node('output-task', 'sThanks', z, { text: 'Thanks {answer} for {order}' }, [['sEnd'], ['sEnd']]),
      node('end-task', 'sEnd', z),
      // WhatsApp: a free-form first message, and (on its own route) a template first.
      tab(w, 'WhatsApp free-form'),
      ...feed(w, 'w', paths.wa, { environment: 'toEnvW' }, 'wHello'),
      node('output-task', 'wHello', w, { text: 'Hello {name}' }, [['wAsk'], ['wEnd']]),
      node('input-task', 'wAsk', w, { prompt: '', resultVariable: 'answer' }, [['wEnd'], ['wEnd']]),
      node('end-task', 'wEnd', w),
      tab(t, 'WhatsApp template'),
      ...feed(t, 't', paths.tpl, { environment: 'toEnvW' }, 'tButtons'),
      node('telco-messenger-buttons', 'tButtons', t, { contentSid: CONTENT_SID, previewText: 'Confirm?', resultVariable: 'choice' }, [['tThanks'], ['tEnd']]),
      node('output-task', 'tThanks', t, { text: 'You chose {choice.payload}' }, [['tEnd'], ['tEnd']]),
      node('end-task', 'tEnd', t),
      // A person who writes first on WhatsApp: a Session that ends at once.
      node('telco-messenger-start', 'wStart', w, { environment: 'toEnvW' }, [['wHi']]),
      node('output-task', 'wHi', w, { text: 'Hi, noted.' }, [['wEnd2'], ['wEnd2']]),
      node('end-task', 'wEnd2', w),
      tab(y, 'No credentials'),
      ...feed(y, 'n', paths.nocred, { environment: 'toEnvN' }, 'nEnd'),
      ...feed(y, 'u', paths.noscheme, { environment: 'toEnvU' }, 'nEnd'),
      node('end-task', 'nEnd', y),
    ]);
  });
  after(async function () {
    await red?.close();
    await fake?.close();
  });

  it('opens the SMS Session of the pair with {message} and msg.vars; the first message carries the status callback; the reply continues it', async function () {
    const user = '+15550004001';
    await textOut(paths.sms, { to: user, from: OURS, text: 'notice', vars: { order: 'A17' } });
    const waiting = await sessionWhen(red, 'toEnvS', user, OURS, (s) => s.waitingAt?.nodeId === 'sAsk', 'the Session to wait for the reply');
    should(fake.messagesTo(user)).eql([
      { To: user, From: OURS, Body: 'Parcel A17 arrives today (notice, outbound). Reply YES.', StatusCallback: red.url(STATUS + tokens.sms) },
    ]);
    should(waiting.channel).eql('TelcoMessagingSms');
    should(waiting.vars.message).match({ from: user, to: OURS, text: 'notice', direction: 'outbound', channel: 'TelcoMessagingSms', isTest: false });
    should(waiting.vars.execution).match({ channelSender: user, channelRecipient: OURS });

    await postInbound(red, tokens.sms, inboundForm(user, OURS, 'YES'));
    const done = await sessionWhen(red, 'toEnvS', user, OURS, (s) => s.state === 'completed', 'the Session to complete');
    should(done.id).eql(waiting.id);
    should(fake.messagesTo(user).map((m) => m.Body)).eql(['Parcel A17 arrives today (notice, outbound). Reply YES.', 'Thanks YES for A17']);
    should(await sessionsOf(red, 'toEnvS', user, OURS)).have.length(1);
  });

  it('refuses a second Text out to a person with a live Session: 4030 naming it, nothing sent', async function () {
    const user = '+15550004002';
    await textOut(paths.sms, { to: user, from: OURS, text: 'first', vars: { order: 'B1' } });
    const waiting = await sessionWhen(red, 'toEnvS', user, OURS, (s) => s.waitingAt?.nodeId === 'sAsk', 'the first Session to wait');
    await textOut(paths.sms, { to: user, from: OURS, text: 'second', vars: { order: 'B2' } });
    const line = await eventually(() => out2('s').find((l) => l.includes(user)), 5000, 'the 4030');
    should(line)
      .match(/"code":4030/)
      .and.match(/"name":"ConversationBusy"/);
    should(line).containEql(waiting.id);
    should(fake.messagesTo(user)).have.length(1);
    should(await sessionsOf(red, 'toEnvS', user, OURS)).have.length(1);
  });

  it('logs each delivery status once in the Session; an undelivered message resumes the waiting InputTask on its error branch with 4001 and the error code', async function () {
    const user = '+15550004003';
    await textOut(paths.sms, { to: user, from: OURS, text: 'n', vars: { order: 'C3' } });
    await sessionWhen(red, 'toEnvS', user, OURS, (s) => s.waitingAt?.nodeId === 'sAsk', 'the Session to wait');
    const [messageSid] = fake.sidsTo(user);
    should(fake.messagesTo(user)[0].Body).match(/C3/);

    // A status of a message this Session did not send (another Session's of the pair) is not its.
    const otherSid = `SM${'e'.repeat(32)}`;
    should((await postStatus(red, tokens.sms, statusForm(otherSid, 'undelivered', user, OURS, '30005'))).status).eql(200);
    const queued = statusForm(messageSid, 'sent', user, OURS);
    should((await postStatus(red, tokens.sms, queued)).status).eql(200);
    should((await postStatus(red, tokens.sms, queued)).status).eql(200);
    await sessionWhen(
      red,
      'toEnvS',
      user,
      OURS,
      (s) => s.log.some((e: any) => e.message.includes(`${messageSid} to ${user}: sent`)),
      'the sent status in the log',
    );

    const undelivered = statusForm(messageSid, 'undelivered', user, OURS, '30003');
    should((await postStatus(red, tokens.sms, undelivered)).status).eql(200);
    const ended = await sessionWhen(red, 'toEnvS', user, OURS, (s) => s.state === 'completed', 'the error branch to end the Session');
    should(ended.log.filter((e: any) => e.message.endsWith(`${messageSid} to ${user}: sent`))).have.length(1);
    should(ended.log.filter((e: any) => e.message.includes(otherSid))).eql([]);
    const error = ended.log.find((e: any) => e.code === 4001);
    should(error.message).containEql('30003').and.containEql('undelivered').and.containEql(messageSid);
    should(error.nodeId).eql('sAsk');
    // The status is no message from the person: no empty line in the history.
    should(ended.history.filter((h: any) => h.from === 'user')).have.length(0);
    // A redelivered status acts once: nothing more happens.
    should((await postStatus(red, tokens.sms, undelivered)).status).eql(200);
    should(fake.messagesTo(user)).have.length(1);
  });

  it('refuses an unsigned or wrongly signed status with 403 and records nothing', async function () {
    const user = '+15550004004';
    const form = statusForm('SM' + '7'.repeat(32), 'delivered', user, OURS);
    const unsigned = await red.request('POST', STATUS + tokens.sms, new URLSearchParams(form).toString(), {
      'Content-Type': 'application/x-www-form-urlencoded',
    });
    should(unsigned.status).eql(403);
    should((await postStatus(red, tokens.sms, form, 'not-the-auth-token')).status).eql(403);
    should((await red.request('POST', STATUS + 'no-such-token', '', {})).status).eql(404);
  });

  it('stops a free-form first WhatsApp message to a person who has not written within 24 hours with 3005, nothing sent', async function () {
    const user = 'whatsapp:+15550004005';
    await textOut(paths.wa, { to: user, from: WA_OURS, vars: { name: 'Ann' } });
    const ended = await sessionWhen(red, 'toEnvW', user, WA_OURS, (s) => s.state === 'completed', 'the error branch to end the Session');
    should(ended.channel).eql('TelcoMessagingMessenger');
    const error = ended.log.find((e: any) => e.code === 3005);
    should(error.message)
      .match(/24 hours/)
      .and.match(/template/)
      .and.match(/buttons/);
    should(fake.attemptsTo(user)).have.length(0);
  });

  it('lets the WhatsApp template (buttons Task) through to that person, and free-form messages once they answered', async function () {
    const user = 'whatsapp:+15550004006';
    await textOut(paths.tpl, { to: user, from: WA_OURS });
    await sessionWhen(red, 'toEnvW', user, WA_OURS, (s) => s.waitingAt?.nodeId === 'tButtons', 'the buttons to wait');
    should(fake.messagesTo(user)).eql([{ To: user, From: WA_OURS, ContentSid: CONTENT_SID, StatusCallback: red.url(STATUS + tokens.wa) }]);
    await postInbound(red, tokens.wa, inboundForm(user, WA_OURS, 'Yes', { ButtonPayload: 'yes', ButtonText: 'Yes' }));
    await sessionWhen(red, 'toEnvW', user, WA_OURS, (s) => s.state === 'completed', 'the Session to complete');
    should(fake.messagesTo(user).map((m) => m.Body ?? m.ContentSid)).eql([CONTENT_SID, 'You chose yes']);
  });

  it('takes a WhatsApp prefix in any case as the provider writes it (whatsapp:): the answer continues that Session', async function () {
    const user = 'whatsapp:+15550004008';
    await textOut(paths.tpl, { to: 'WhatsApp:+15550004008', from: WA_OURS.toUpperCase() });
    await sessionWhen(red, 'toEnvW', user, WA_OURS, (s) => s.waitingAt?.nodeId === 'tButtons', 'the buttons to wait');
    should(fake.messagesTo(user)).eql([{ To: user, From: WA_OURS, ContentSid: CONTENT_SID, StatusCallback: red.url(STATUS + tokens.wa) }]);
    await postInbound(red, tokens.wa, inboundForm(user, WA_OURS, 'Yes', { ButtonPayload: 'yes', ButtonText: 'Yes' }));
    await sessionWhen(red, 'toEnvW', user, WA_OURS, (s) => s.state === 'completed', 'the Session to complete');
    should(await sessionsOf(red, 'toEnvW', user, WA_OURS)).have.length(1);
  });

  it('sends a free-form first WhatsApp message to a person who wrote within 24 hours in an earlier, ended Session', async function () {
    const user = 'whatsapp:+15550004007';
    await postInbound(red, tokens.wa, inboundForm(user, WA_OURS, 'hello there'));
    const first = await sessionWhen(red, 'toEnvW', user, WA_OURS, (s) => s.state === 'completed', "the person's own Session to end");
    await textOut(paths.wa, { to: user, from: WA_OURS, vars: { name: 'Bo' } });
    const second = await sessionWhen(red, 'toEnvW', user, WA_OURS, (s) => s.id !== first.id && s.waitingAt?.nodeId === 'wAsk', 'the Text out Session to wait');
    should(second.log.some((e: any) => e.code === 3005)).be.false();
    should(fake.messagesTo(user).map((m) => m.Body)).eql(['Hi, noted.', 'Hello Bo']);
  });

  it('refuses bad input on output 2 with 3005 naming the field, and missing credentials with 4008, before anything is sent', async function () {
    const before = fake.requests.length;
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ from: OURS }, /"code":3005.*to \(msg\.to\): the person's number is missing/],
      [{ to: '5550004010', from: OURS }, /"code":3005.*to \(msg\.to\): \\"5550004010\\" is not a number in E\.164/],
      [{ to: '+15550004011' }, /"code":3005.*from \(msg\.from\): our number is missing/],
      [{ to: '+15550004012', from: '+0123' }, /"code":3005.*from \(msg\.from\): \\"\+0123\\" is not a number in E\.164/],
      [{ to: 'whatsapp:+15550004013', from: OURS }, /"code":3005.*from \\"\+15550003000\\" lacks the whatsapp: prefix/],
      [{ to: '+15550004014', from: WA_OURS }, /"code":3005.*to \\"\+15550004014\\" lacks the whatsapp: prefix/],
      [{ to: '+15550004015', from: OURS, vars: 'not an object' }, /"code":3005.*msg\.vars must be an object/],
    ];
    for (const [body, expected] of cases) {
      const seen = out2('s').length;
      await textOut(paths.sms, body);
      const line = await eventually(() => out2('s')[seen], 5000, `output 2 for ${JSON.stringify(body)}`);
      should(line).match(expected);
    }
    await textOut(paths.nocred, { to: '+15550004016', from: OURS });
    should(await eventually(() => out2('n')[0], 5000, 'the 4008')).match(/"code":4008.*Auth Token not set/);
    should(fake.requests.length).eql(before);
    should(await sessionsOf(red, 'toEnvS', '+15550004015', OURS)).have.length(0);
  });

  it("refuses with 4008 naming the API URL when the Environment's is not an http(s) URL with a host: nothing sent, no Session", async function () {
    const before = fake.requests.length;
    await textOut(paths.noscheme, { to: '+15550004017', from: OURS });
    should(await eventually(() => out2('u')[0], 5000, 'the 4008')).match(
      /"code":4008.*"message":"The API URL \\"localhost:3000\\" of the messaging Environment \\"env toEnvU\\" is not a URL with http:\/\/ or https:\/\/ and a host/,
    );
    should(fake.requests.length).eql(before);
    should(await sessionsOf(red, 'toEnvU', '+15550004017', OURS)).have.length(0);
  });
});
