import should from 'should';
import { NodeRed, eventually } from '../harness/node-red';
import { chain, node, tab } from '../harness/flows';
import { AUTH_TOKEN, FakeTwilioCall } from '../fakes/twilio-voice-caller';
import { logsSince, sessionOfCall, voiceEnvironment } from '../harness/voice-flows';

/** The voice webhooks on a real Node-RED: TwiML answers, signatures, {call}, the standard Tasks. */
describe('voice webhooks: calls as Sessions answered with TwiML', function () {
  let red: NodeRed;
  const ivr = voiceEnvironment('venv', { defaultVoice: 'Polly.Joanna', defaultLanguage: 'en-US', speechModel: 'phone_call' });
  const plain = voiceEnvironment('vplain');
  const secret = voiceEnvironment('vsecret', {}, { webhookSigningSecret: 'signing-secret-override' });
  const open = voiceEnvironment('vopen', { validateSignatures: false });
  const noCreds = voiceEnvironment('vnocreds', {}, { accountSid: '', authToken: '' });
  const orphan = voiceEnvironment('vorphan');
  const pub = voiceEnvironment('vpublic', { publicBaseUrl: 'https://ivr.example.com/base/', speechModel: 'phone_call_enhanced' });
  const noReply = voiceEnvironment('vnoreply');

  before(async function () {
    red = await NodeRed.start();
    await red.deploy([
      ivr,
      plain,
      secret,
      open,
      noCreds,
      pub,
      orphan,
      noReply,
      tab('pIvr', 'IVR'),
      node('telco-call-start', 'cs', 'pIvr', { environment: 'venv', variable: 'call' }, [['welcome']]),
      node('output-task', 'welcome', 'pIvr', { text: 'Welcome {call.callerName} from {call.fromCountry}.' }, [['ask'], []]),
      node('input-task', 'ask', 'pIvr', { prompt: 'Say sales or press 1.', resultVariable: 'choice' }, [['echo'], ['sorry']]),
      node('output-task', 'echo', 'pIvr', { text: 'You chose {choice}.' }, [['bye'], []]),
      node('output-task', 'sorry', 'pIvr', { text: 'Sorry, error {error.code}.' }, [['bye'], []]),
      node('end-task', 'bye', 'pIvr', {}),

      tab('pPlain', 'Plain'),
      node('telco-call-start', 'ps', 'pPlain', { environment: 'vplain' }, [['lang']]),
      node('change', 'lang', 'pPlain', { rules: [{ t: 'set', p: 'vars.language', pt: 'msg', to: 'de-DE', tot: 'str' }] }, [['hello']]),
      node('output-task', 'hello', 'pPlain', { text: 'Hallo.' }, [['pask'], []]),
      node('input-task', 'pask', 'pPlain', { prompt: '', resultVariable: 'said' }, [['noend'], []]),
      node('output-task', 'noend', 'pPlain', { text: 'Heard: {said}' }, [[], []]),

      tab('pSecret', 'Secret'),
      ...chain('pSecret', [
        ['telco-call-start', 'ss', { environment: 'vsecret' }],
        ['output-task', 'sout', { text: 'secret ok' }],
        ['end-task', 'send'],
      ]),
      tab('pOpen', 'Open'),
      ...chain('pOpen', [
        ['telco-call-start', 'os', { environment: 'vopen' }],
        ['output-task', 'oout', { text: 'open ok' }],
        ['end-task', 'oend'],
      ]),
      tab('pNoCreds', 'No creds'),
      ...chain('pNoCreds', [
        ['telco-call-start', 'ns', { environment: 'vnocreds' }],
        ['output-task', 'nout', { text: 'must not run' }],
        ['end-task', 'nend'],
      ]),
      tab('pPublic', 'Public'),
      ...chain('pPublic', [
        ['telco-call-start', 'us', { environment: 'vpublic' }],
        ['input-task', 'uask', { prompt: 'Go on', resultVariable: 'x' }],
        ['end-task', 'uend'],
      ]),
      // An InputTask with "no reply after" 2 s: output 3 asks whether the caller is still there.
      tab('pNoReply', 'No reply'),
      node('telco-call-start', 'nrs', 'pNoReply', { environment: 'vnoreply' }, [['nrask']]),
      node('input-task', 'nrask', 'pNoReply', { prompt: 'Your order number?', resultVariable: 'order', timeout: 2 }, [['nrgot'], ['nrerr'], ['nrstill']]),
      node('output-task', 'nrgot', 'pNoReply', { text: 'Order {order}.' }, [['nrend'], []]),
      node('output-task', 'nrerr', 'pNoReply', { text: 'Error {error.code}.' }, [['nrend'], []]),
      node('output-task', 'nrstill', 'pNoReply', { text: 'Still there?' }, [['nrend'], []]),
      node('end-task', 'nrend', 'pNoReply', {}),
    ]);
  });
  after(async () => red?.close());

  it('answers the start webhook with Say in the Default Voice and Language and a Gather for speech and digits', async function () {
    const call = new FakeTwilioCall(red);
    const answer = await call.start(ivr.token, { CallerName: 'Ada', FromCountry: 'GB' });
    should(answer.status).equal(200, answer.text);
    should(answer.contentType).match(/^text\/xml/);
    should(answer.verbs.map((v) => v.verb)).eql(['Say', 'Gather']);
    const [say, gather] = answer.verbs;
    should(say.attrs).eql({ voice: 'Polly.Joanna', language: 'en-US' });
    should(say.text).equal('Welcome Ada from GB.');
    should(gather.attrs).eql({
      input: 'speech dtmf',
      action: '/api/TelcoModule/Voice/next/venv',
      method: 'POST',
      timeout: '5',
      speechTimeout: '5',
      actionOnEmptyResult: 'true',
      language: 'en-US',
      speechModel: 'phone_call',
    });
    should(gather.children.map((c) => [c.verb, c.text, c.attrs.voice])).eql([['Say', 'Say sales or press 1.', 'Polly.Joanna']]);
  });

  it('resumes the Session by CallSid with the speech transcript and hangs up at EndTask, saying nothing more', async function () {
    const call = new FakeTwilioCall(red);
    const first = await call.start(ivr.token);
    const answer = await call.follow(first.verbs[1].attrs.action, { SpeechResult: 'sales', Confidence: '0.9' });
    should(answer.status).equal(200);
    should(answer.verbs.map((v) => [v.verb, v.text])).eql([
      ['Say', 'You chose sales.'],
      ['Hangup', ''],
    ]);
    const session = await sessionOfCall(red, call.callSid);
    should(session.state).equal('completed');
    should(session.vars.choice).equal('sales');
  });

  it('counts an InputTask\'s "no reply after" on a call from when its prompt was said: an answer after that time on the clock still continues the Task', async function () {
    const call = new FakeTwilioCall(red);
    const first = await call.start(noReply.token);
    // The caller is still hearing what comes before the prompt (a long Play, a Dial) when 2 s have passed here.
    await new Promise((r) => setTimeout(r, 3500));
    const waiting = await sessionOfCall(red, call.callSid);
    should(waiting.state).equal('waiting', 'no "no reply" while the caller cannot answer yet');
    should(waiting.waitingAt.nodeId).equal('nrask');
    const answer = await call.follow(first.verbs[0].attrs.action, { SpeechResult: '42', Confidence: '0.9' });
    should(answer.verbs.map((v) => [v.verb, v.text])).eql([
      ['Say', 'Order 42.'],
      ['Hangup', ''],
    ]);
    const session = await sessionOfCall(red, call.callSid);
    should(session.state).equal('completed');
    should(session.vars.order).equal('42');
  });

  it('takes the "no reply" output when the Gather of an InputTask with a timeout ends in silence', async function () {
    const call = new FakeTwilioCall(red);
    const first = await call.start(noReply.token);
    // The provider counts the Gather's timeout from when the prompt has been said.
    should(first.verbs.map((v) => [v.verb, v.attrs.timeout])).eql([['Gather', '2']]);
    // The Gather's own timeout passed with nothing said: the provider posts its action anyway (actionOnEmptyResult).
    const answer = await call.follow(first.verbs[0].attrs.action, { SpeechResult: '' });
    should(answer.verbs.map((v) => [v.verb, v.text])).eql([
      ['Say', 'Still there?'],
      ['Hangup', ''],
    ]);
  });

  it('answers a retried callback (same I-Twilio-Idempotency-Token) with the first answer, advancing nothing twice', async function () {
    const call = new FakeTwilioCall(red);
    await call.start(ivr.token);
    const params = { ...call.baseParams(), SpeechResult: 'support' };
    const retry = { 'I-Twilio-Idempotency-Token': 'idem-1' };
    const [first, second] = await Promise.all([
      call.post('/api/TelcoModule/Voice/next/venv', params, retry),
      call.post('/api/TelcoModule/Voice/next/venv', params, retry),
    ]);
    should(first.verbs.map((v) => [v.verb, v.text])).eql([
      ['Say', 'You chose support.'],
      ['Hangup', ''],
    ]);
    should(second.text).equal(first.text);
    const session = await sessionOfCall(red, call.callSid);
    should(session.history.filter((h: any) => h.from === 'user').length).equal(1, 'the answer reached the flow once');
    const other = await call.post('/api/TelcoModule/Voice/next/venv', params, { 'I-Twilio-Idempotency-Token': 'idem-2' });
    should(other.verbs.map((v) => v.verb)).eql(['Hangup'], 'a new callback for the finished call only hangs up');
  });

  it('stores keypad digits when the caller presses keys', async function () {
    const call = new FakeTwilioCall(red);
    await call.start(ivr.token);
    const answer = await call.next('venv', { Digits: '1' });
    should(answer.verbs[0].text).equal('You chose 1.');
    should((await sessionOfCall(red, call.callSid)).vars.choice).equal('1');
  });

  it('sends InputTask to its error branch with 4009 when the caller neither speaks nor presses a key', async function () {
    const call = new FakeTwilioCall(red);
    await call.start(ivr.token);
    const answer = await call.next('venv', {});
    should(answer.verbs.map((v) => [v.verb, v.text])).eql([
      ['Say', 'Sorry, error 4009.'],
      ['Hangup', ''],
    ]);
    const session = await sessionOfCall(red, call.callSid);
    should(session.log.find((e: any) => e.code === 4009)?.nodeId).equal('ask');
  });

  it('writes every field of {call} and execution.channelSender / channelRecipient', async function () {
    const call = new FakeTwilioCall(red, { from: '+447700900123', to: '+14155550999' });
    await call.start(ivr.token, { CallerName: 'Ada Lovelace', FromCountry: 'GB', Direction: 'outbound-api' });
    const session = await sessionOfCall(red, call.callSid);
    should(session.vars.call).eql({
      from: '+447700900123',
      to: '+14155550999',
      callId: call.callSid,
      direction: 'outbound',
      callerName: 'Ada Lovelace',
      fromCountry: 'GB',
      channel: 'TelcoVoice',
      isTest: false,
    });
    should(session.vars.execution.channelSender).equal('+447700900123');
    should(session.vars.execution.channelRecipient).equal('+14155550999');
    should(session.vars.execution.channel).equal('TelcoVoice');
    should(session.channel).equal('TelcoVoice');
  });

  it('keeps caller-controlled text literal: speech and caller name can never add TwiML verbs', async function () {
    const call = new FakeTwilioCall(red);
    const injected = '</Say><Dial>+19005550100</Dial><Say>';
    const first = await call.start(ivr.token, { CallerName: '<Hangup/>&amp;' });
    should(first.verbs.map((v) => v.verb)).eql(['Say', 'Gather']);
    should(first.verbs[0].text).equal('Welcome <Hangup/>&amp; from .');
    const answer = await call.next('venv', { SpeechResult: injected });
    should(answer.verbs.map((v) => v.verb)).eql(['Say', 'Hangup']);
    should(answer.verbs[0].text).equal(`You chose ${injected}.`);
    should(answer.text).not.containEql('<Dial>');
  });

  it("speaks in the Session's language when the Environment has no Default Language, and answers what was said when the flow ends without EndTask", async function () {
    const call = new FakeTwilioCall(red);
    const first = await call.start(plain.token);
    should(first.verbs.map((v) => [v.verb, v.attrs.language])).eql([
      ['Say', 'de-DE'],
      ['Gather', 'de-DE'],
    ]);
    should(first.verbs[0].attrs.voice).equal(undefined, 'no Default Voice: the provider standard');
    should(first.verbs[1].children).eql([], 'an empty prompt says nothing inside the Gather');
    const last = await call.next('vplain', { SpeechResult: 'ja' });
    should(last.verbs.map((v) => [v.verb, v.text])).eql([['Say', 'Heard: ja']]);
    const ended = await eventually(
      async () => {
        const s = await sessionOfCall(red, call.callSid);
        return s.state === 'ended' ? s : undefined;
      },
      3000,
      'the Session to end',
    );
    should(ended.endReason).match(/without reaching an EndTask/);
  });

  it("refuses a bad signature with 403 and 4020 in the log, the URL's token shortened, running nothing", async function () {
    const mark = red.logs.length;
    const call = new FakeTwilioCall(red, { signingKey: 'not-the-auth-token' });
    const answer = await call.start(ivr.token);
    should(answer.status).equal(403);
    await eventually(() => logsSince(red, mark).some((l) => /4020 WebhookSignatureInvalid/.test(l)), 3000, 'the 4020 log line');
    should(logsSince(red, mark).some((l) => l.includes(`/api/TelcoModule/Voice/start/${ivr.token.slice(0, 4)}…`))).be.true();
    should(logsSince(red, mark).filter((l) => l.includes(ivr.token))).eql([]);
    should(await sessionOfCall(red, call.callSid)).equal(undefined, 'no Session started');
  });

  it('refuses a request without the X-Twilio-Signature header with 403 and 4020', async function () {
    const mark = red.logs.length;
    const call = new FakeTwilioCall(red);
    const res = await fetch(red.url(`/api/TelcoModule/Voice/start/${ivr.token}`), {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(call.baseParams()).toString(),
    });
    should(res.status).equal(403);
    await eventually(() => logsSince(red, mark).some((l) => /4020 .*header is missing/.test(l)), 3000, 'the 4020 log line');
  });

  it('checks the signature of the next webhook too', async function () {
    const call = new FakeTwilioCall(red);
    await call.start(ivr.token);
    const forged = new FakeTwilioCall(red, { signingKey: 'forged' });
    const answer = await forged.post(`/api/TelcoModule/Voice/next/venv`, { ...call.baseParams(), SpeechResult: 'sales' });
    should(answer.status).equal(403);
    const session = await sessionOfCall(red, call.callSid);
    should(session.state).equal('waiting', 'the forged answer did not resume the Session');
    should(session.vars.choice).equal(undefined);
  });

  it('checks signatures with the Webhook Signing Secret when one is set, not the Auth Token', async function () {
    const withSecret = await new FakeTwilioCall(red, { signingKey: 'signing-secret-override' }).start(secret.token);
    should(withSecret.status).equal(200);
    should(withSecret.verbs.map((v) => [v.verb, v.text])).eql([
      ['Say', 'secret ok'],
      ['Hangup', ''],
    ]);
    const withToken = await new FakeTwilioCall(red, { signingKey: AUTH_TOKEN }).start(secret.token);
    should(withToken.status).equal(403);
  });

  it('skips the check when Validate Signatures is off', async function () {
    const call = new FakeTwilioCall(red, { signingKey: 'anything' });
    const answer = await call.start(open.token);
    should(answer.status).equal(200);
    should(answer.verbs[0].text).equal('open ok');
  });

  it('validates against publicBaseUrl + httpNode root + path when a Public base URL is set, and builds absolute action URLs', async function () {
    const call = new FakeTwilioCall(red, { publicBaseUrl: 'https://ivr.example.com/base' });
    const answer = await call.start(pub.token);
    should(answer.status).equal(200, answer.text);
    should(answer.verbs[0].attrs.action).equal('https://ivr.example.com/base/api/TelcoModule/Voice/next/vpublic');
    should(answer.verbs[0].attrs.speechModel).equal('phone_call', 'the enhanced model is phone_call with enhanced="true"');
    should(answer.verbs[0].attrs.enhanced).equal('true');
    const local = await new FakeTwilioCall(red).start(pub.token);
    should(local.status).equal(403, 'a signature over the local URL does not pass when a public URL is configured');
  });

  it('without a Public base URL validates against the request URL, honouring X-Forwarded-Proto and X-Forwarded-Host', async function () {
    const call = new FakeTwilioCall(red);
    const path = `/api/TelcoModule/Voice/start/${plain.token}`;
    const answer = await call.post(
      path,
      call.baseParams(),
      { 'X-Forwarded-Proto': 'https', 'X-Forwarded-Host': 'voice.example.org' },
      `https://voice.example.org${path}`,
    );
    should(answer.status).equal(200, answer.text);
  });

  it('answers 404 to an unknown token and starts nothing', async function () {
    const call = new FakeTwilioCall(red);
    const answer = await call.start('no-such-token');
    should(answer.status).equal(404);
    should(await sessionOfCall(red, call.callSid)).equal(undefined);
  });

  it('hangs up and logs why when no Process has a start for the Environment', async function () {
    const mark = red.logs.length;
    const answer = await new FakeTwilioCall(red).start(orphan.token);
    should(answer.verbs.map((v) => v.verb)).eql(['Hangup']);
    await eventually(() => logsSince(red, mark).some((l) => /No Process has a start for Environment "Voice vorphan"/.test(l)), 3000, 'the log line');
  });

  it('answers 404 on the next webhook of an Environment that is not deployed', async function () {
    const call = new FakeTwilioCall(red);
    const answer = await call.next('no-such-environment', { SpeechResult: 'hi' });
    should(answer.status).equal(404);
  });

  it('refuses an oversized body with 413 and runs nothing', async function () {
    const call = new FakeTwilioCall(red);
    const answer = await call.start(ivr.token, { Padding: 'x'.repeat(100 * 1024) });
    should(answer.status).equal(413);
    should(await sessionOfCall(red, call.callSid)).equal(undefined);
  });

  it('answers 400 and logs 4012 when the payload has no CallSid', async function () {
    const mark = red.logs.length;
    const call = new FakeTwilioCall(red);
    const { CallSid: _omit, ...params } = call.baseParams();
    const answer = await call.post(`/api/TelcoModule/Voice/start/${ivr.token}`, params);
    should(answer.status).equal(400);
    should(answer.text).match(/CallSid/);
    await eventually(() => logsSince(red, mark).some((l) => /4012 ModuleInvalidData/.test(l)), 3000, 'the 4012 log line');
  });

  it('logs 4008 and hangs up, running nothing, when the Account SID or Auth Token is missing', async function () {
    const mark = red.logs.length;
    const call = new FakeTwilioCall(red);
    const answer = await call.start(noCreds.token);
    should(answer.status).equal(200);
    should(answer.verbs.map((v) => v.verb)).eql(['Hangup']);
    await eventually(() => logsSince(red, mark).some((l) => /4008 ModuleMissingConfiguration: Account SID and Auth Token/.test(l)), 3000, 'the 4008 log line');
    should(await sessionOfCall(red, call.callSid)).equal(undefined);
  });

  it('ends a waiting Session when a status callback says the caller hung up', async function () {
    const call = new FakeTwilioCall(red);
    await call.start(ivr.token);
    should((await sessionOfCall(red, call.callSid)).state).equal('waiting');
    const answer = await call.next('venv', { CallStatus: 'completed', CallDuration: '12' });
    should(answer.status).equal(200);
    should(answer.verbs).eql([]);
    const session = await sessionOfCall(red, call.callSid);
    should(session.state).equal('ended');
    should(session.endReason).match(/CallStatus completed/);
  });

  it('logs the start URL on deploy and never logs a credential', async function () {
    should(red.logs.some((l) => l.includes(`Start URL: https://ivr.example.com/base/api/TelcoModule/Voice/start/${pub.token}`))).be.true();
    should(red.logs.some((l) => l.includes(`Start URL: /api/TelcoModule/Voice/start/${ivr.token}`))).be.true();
    should(red.logs.some((l) => l.includes(AUTH_TOKEN) || l.includes('signing-secret-override'))).be.false();
  });
});
