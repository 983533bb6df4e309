import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { NodeRed, eventually } from './harness/node-red';
import { chain, node, tab } from './harness/flows';
import { AUTH_TOKEN, FakeTwilioCall } from './fakes/twilio-voice-caller';
import { logsSince, sessionOfCall, voiceEnvironment } from './voice-flows';

/** The voice webhooks on a real Node-RED: TwiML answers, signatures, {call}, the standard Tasks. */
describe('voice webhooks: calls as Sessions answered with TwiML', () => {
  let red: NodeRed;
  const ivr = voiceEnvironment('venv', { defaultVoice: 'Polly.Joanna', defaultLanguage: 'en-US', speechModel: 'phone_call' });
  const plain = voiceEnvironment('vplain');
  const secret = voiceEnvironment('vsecret', {}, { webhookSigningSecret: 'signing-secret-override' });
  const open = voiceEnvironment('vopen', { validateSignatures: false });
  const noCreds = voiceEnvironment('vnocreds', {}, { accountSid: '', authToken: '' });
  const orphan = voiceEnvironment('vorphan');
  const pub = voiceEnvironment('vpublic', { publicBaseUrl: 'https://ivr.example.com/base/', speechModel: 'phone_call_enhanced' });

  before(async () => {
    red = await NodeRed.start();
    await red.deploy([
      ivr, plain, secret, open, noCreds, pub, orphan,
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
      ...chain('pSecret', [['telco-call-start', 'ss', { environment: 'vsecret' }], ['output-task', 'sout', { text: 'secret ok' }], ['end-task', 'send']]),
      tab('pOpen', 'Open'),
      ...chain('pOpen', [['telco-call-start', 'os', { environment: 'vopen' }], ['output-task', 'oout', { text: 'open ok' }], ['end-task', 'oend']]),
      tab('pNoCreds', 'No creds'),
      ...chain('pNoCreds', [['telco-call-start', 'ns', { environment: 'vnocreds' }], ['output-task', 'nout', { text: 'must not run' }], ['end-task', 'nend']]),
      tab('pPublic', 'Public'),
      ...chain('pPublic', [['telco-call-start', 'us', { environment: 'vpublic' }], ['input-task', 'uask', { prompt: 'Go on', resultVariable: 'x' }], ['end-task', 'uend']]),
    ]);
  });
  after(async () => red?.close());

  it('answers the start webhook with Say in the Default Voice and Language and a Gather for speech and digits', async () => {
    const call = new FakeTwilioCall(red);
    const answer = await call.start(ivr.token, { CallerName: 'Ada', FromCountry: 'GB' });
    assert.equal(answer.status, 200, answer.text);
    assert.match(answer.contentType, /^text\/xml/);
    assert.deepEqual(answer.verbs.map((v) => v.verb), ['Say', 'Gather']);
    const [say, gather] = answer.verbs;
    assert.deepEqual(say.attrs, { voice: 'Polly.Joanna', language: 'en-US' });
    assert.equal(say.text, 'Welcome Ada from GB.');
    assert.deepEqual(gather.attrs, {
      input: 'speech dtmf', action: '/api/TelcoModule/Voice/next/venv', method: 'POST', timeout: '5', speechTimeout: '5',
      actionOnEmptyResult: 'true', language: 'en-US', speechModel: 'phone_call',
    });
    assert.deepEqual(gather.children.map((c) => [c.verb, c.text, c.attrs.voice]), [['Say', 'Say sales or press 1.', 'Polly.Joanna']]);
  });

  it('resumes the Session by CallSid with the speech transcript and hangs up at EndTask, saying nothing more', async () => {
    const call = new FakeTwilioCall(red);
    const first = await call.start(ivr.token);
    const answer = await call.follow(first.verbs[1].attrs.action, { SpeechResult: 'sales', Confidence: '0.9' });
    assert.equal(answer.status, 200);
    assert.deepEqual(answer.verbs.map((v) => [v.verb, v.text]), [['Say', 'You chose sales.'], ['Hangup', '']]);
    const session = await sessionOfCall(red, call.callSid);
    assert.equal(session.state, 'completed');
    assert.equal(session.vars.choice, 'sales');
  });

  it('answers a retried callback (same I-Twilio-Idempotency-Token) with the first answer, advancing nothing twice', async () => {
    const call = new FakeTwilioCall(red);
    await call.start(ivr.token);
    const params = { ...call.baseParams(), SpeechResult: 'support' };
    const retry = { 'I-Twilio-Idempotency-Token': 'idem-1' };
    const [first, second] = await Promise.all([
      call.post('/api/TelcoModule/Voice/next/venv', params, retry),
      call.post('/api/TelcoModule/Voice/next/venv', params, retry),
    ]);
    assert.deepEqual(first.verbs.map((v) => [v.verb, v.text]), [['Say', 'You chose support.'], ['Hangup', '']]);
    assert.equal(second.text, first.text);
    const session = await sessionOfCall(red, call.callSid);
    assert.equal(session.history.filter((h: any) => h.from === 'user').length, 1, 'the answer reached the flow once');
    const other = await call.post('/api/TelcoModule/Voice/next/venv', params, { 'I-Twilio-Idempotency-Token': 'idem-2' });
    assert.deepEqual(other.verbs.map((v) => v.verb), ['Hangup'], 'a new callback for the finished call only hangs up');
  });

  it('stores keypad digits when the caller presses keys', async () => {
    const call = new FakeTwilioCall(red);
    await call.start(ivr.token);
    const answer = await call.next('venv', { Digits: '1' });
    assert.equal(answer.verbs[0].text, 'You chose 1.');
    assert.equal((await sessionOfCall(red, call.callSid)).vars.choice, '1');
  });

  it('sends InputTask to its error branch with 4009 when the caller neither speaks nor presses a key', async () => {
    const call = new FakeTwilioCall(red);
    await call.start(ivr.token);
    const answer = await call.next('venv', {});
    assert.deepEqual(answer.verbs.map((v) => [v.verb, v.text]), [['Say', 'Sorry, error 4009.'], ['Hangup', '']]);
    const session = await sessionOfCall(red, call.callSid);
    assert.equal(session.log.find((e: any) => e.code === 4009)?.nodeId, 'ask');
  });

  it('writes every field of {call} and execution.channelSender / channelRecipient', async () => {
    const call = new FakeTwilioCall(red, { from: '+447700900123', to: '+14155550999' });
    await call.start(ivr.token, { CallerName: 'Ada Lovelace', FromCountry: 'GB', Direction: 'outbound-api' });
    const session = await sessionOfCall(red, call.callSid);
    assert.deepEqual(session.vars.call, {
      from: '+447700900123', to: '+14155550999', callId: call.callSid, direction: 'outbound',
      callerName: 'Ada Lovelace', fromCountry: 'GB', channel: 'TelcoVoice', isTest: false,
    });
    assert.equal(session.vars.execution.channelSender, '+447700900123');
    assert.equal(session.vars.execution.channelRecipient, '+14155550999');
    assert.equal(session.vars.execution.channel, 'TelcoVoice');
    assert.equal(session.channel, 'TelcoVoice');
  });

  it('keeps caller-controlled text literal: speech and caller name can never add TwiML verbs', async () => {
    const call = new FakeTwilioCall(red);
    const injected = '</Say><Dial>+19005550100</Dial><Say>';
    const first = await call.start(ivr.token, { CallerName: '<Hangup/>&amp;' });
    assert.deepEqual(first.verbs.map((v) => v.verb), ['Say', 'Gather']);
    assert.equal(first.verbs[0].text, 'Welcome <Hangup/>&amp; from .');
    const answer = await call.next('venv', { SpeechResult: injected });
    assert.deepEqual(answer.verbs.map((v) => v.verb), ['Say', 'Hangup']);
    assert.equal(answer.verbs[0].text, `You chose ${injected}.`);
    assert.ok(!answer.text.includes('<Dial>'), answer.text);
  });

  it("speaks in the Session's language when the Environment has no Default Language, and answers what was said when the flow ends without EndTask", async () => {
    const call = new FakeTwilioCall(red);
    const first = await call.start(plain.token);
    assert.deepEqual(first.verbs.map((v) => [v.verb, v.attrs.language]), [['Say', 'de-DE'], ['Gather', 'de-DE']]);
    assert.equal(first.verbs[0].attrs.voice, undefined, 'no Default Voice: the provider standard');
    assert.deepEqual(first.verbs[1].children, [], 'an empty prompt says nothing inside the Gather');
    const last = await call.next('vplain', { SpeechResult: 'ja' });
    assert.deepEqual(last.verbs.map((v) => [v.verb, v.text]), [['Say', 'Heard: ja']]);
    const ended = await eventually(async () => {
      const s = await sessionOfCall(red, call.callSid);
      return s.state === 'ended' ? s : undefined;
    }, 3000, 'the Session to end');
    assert.match(ended.endReason, /without reaching an EndTask/);
  });

  it('refuses a bad signature with 403 and 4020 in the log, running nothing', async () => {
    const mark = red.logs.length;
    const call = new FakeTwilioCall(red, { signingKey: 'not-the-auth-token' });
    const answer = await call.start(ivr.token);
    assert.equal(answer.status, 403);
    await eventually(() => logsSince(red, mark).some((l) => /4020 WebhookSignatureInvalid/.test(l)), 3000, 'the 4020 log line');
    assert.equal(await sessionOfCall(red, call.callSid), undefined, 'no Session started');
  });

  it('refuses a request without the X-Twilio-Signature header with 403 and 4020', async () => {
    const mark = red.logs.length;
    const call = new FakeTwilioCall(red);
    const res = await fetch(red.url(`/api/TelcoModule/Voice/start/${ivr.token}`), {
      method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(call.baseParams()).toString(),
    });
    assert.equal(res.status, 403);
    await eventually(() => logsSince(red, mark).some((l) => /4020 .*header is missing/.test(l)), 3000, 'the 4020 log line');
  });

  it('checks the signature of the next webhook too', async () => {
    const call = new FakeTwilioCall(red);
    await call.start(ivr.token);
    const forged = new FakeTwilioCall(red, { signingKey: 'forged' });
    const answer = await forged.post(`/api/TelcoModule/Voice/next/venv`, { ...call.baseParams(), SpeechResult: 'sales' });
    assert.equal(answer.status, 403);
    const session = await sessionOfCall(red, call.callSid);
    assert.equal(session.state, 'waiting', 'the forged answer did not resume the Session');
    assert.equal(session.vars.choice, undefined);
  });

  it('checks signatures with the Webhook Signing Secret when one is set, not the Auth Token', async () => {
    const withSecret = await new FakeTwilioCall(red, { signingKey: 'signing-secret-override' }).start(secret.token);
    assert.equal(withSecret.status, 200);
    assert.deepEqual(withSecret.verbs.map((v) => [v.verb, v.text]), [['Say', 'secret ok'], ['Hangup', '']]);
    const withToken = await new FakeTwilioCall(red, { signingKey: AUTH_TOKEN }).start(secret.token);
    assert.equal(withToken.status, 403);
  });

  it('skips the check when Validate Signatures is off', async () => {
    const call = new FakeTwilioCall(red, { signingKey: 'anything' });
    const answer = await call.start(open.token);
    assert.equal(answer.status, 200);
    assert.equal(answer.verbs[0].text, 'open ok');
  });

  it('validates against publicBaseUrl + httpNode root + path when a Public base URL is set, and builds absolute action URLs', async () => {
    const call = new FakeTwilioCall(red, { publicBaseUrl: 'https://ivr.example.com/base' });
    const answer = await call.start(pub.token);
    assert.equal(answer.status, 200, answer.text);
    assert.equal(answer.verbs[0].attrs.action, 'https://ivr.example.com/base/api/TelcoModule/Voice/next/vpublic');
    assert.equal(answer.verbs[0].attrs.speechModel, 'phone_call', 'the enhanced model is phone_call with enhanced="true"');
    assert.equal(answer.verbs[0].attrs.enhanced, 'true');
    const local = await new FakeTwilioCall(red).start(pub.token);
    assert.equal(local.status, 403, 'a signature over the local URL does not pass when a public URL is configured');
  });

  it('without a Public base URL validates against the request URL, honouring X-Forwarded-Proto and X-Forwarded-Host', async () => {
    const call = new FakeTwilioCall(red);
    const path = `/api/TelcoModule/Voice/start/${plain.token}`;
    const answer = await call.post(path, call.baseParams(), { 'X-Forwarded-Proto': 'https', 'X-Forwarded-Host': 'voice.example.org' }, `https://voice.example.org${path}`);
    assert.equal(answer.status, 200, answer.text);
  });

  it('answers 404 to an unknown token and starts nothing', async () => {
    const call = new FakeTwilioCall(red);
    const answer = await call.start('no-such-token');
    assert.equal(answer.status, 404);
    assert.equal(await sessionOfCall(red, call.callSid), undefined);
  });

  it('hangs up and logs why when no Process has a start for the Environment', async () => {
    const mark = red.logs.length;
    const answer = await new FakeTwilioCall(red).start(orphan.token);
    assert.deepEqual(answer.verbs.map((v) => v.verb), ['Hangup']);
    await eventually(() => logsSince(red, mark).some((l) => /No Process has a start for Environment "Voice vorphan"/.test(l)), 3000, 'the log line');
  });

  it('answers 404 on the next webhook of an Environment that is not deployed', async () => {
    const call = new FakeTwilioCall(red);
    const answer = await call.next('no-such-environment', { SpeechResult: 'hi' });
    assert.equal(answer.status, 404);
  });

  it('refuses an oversized body with 413 and runs nothing', async () => {
    const call = new FakeTwilioCall(red);
    const answer = await call.start(ivr.token, { Padding: 'x'.repeat(100 * 1024) });
    assert.equal(answer.status, 413);
    assert.equal(await sessionOfCall(red, call.callSid), undefined);
  });

  it('answers 400 and logs 4012 when the payload has no CallSid', async () => {
    const mark = red.logs.length;
    const call = new FakeTwilioCall(red);
    const { CallSid: _omit, ...params } = call.baseParams();
    const answer = await call.post(`/api/TelcoModule/Voice/start/${ivr.token}`, params);
    assert.equal(answer.status, 400);
    assert.match(answer.text, /CallSid/);
    await eventually(() => logsSince(red, mark).some((l) => /4012 ModuleInvalidData/.test(l)), 3000, 'the 4012 log line');
  });

  it('logs 4008 and hangs up, running nothing, when the Account SID or Auth Token is missing', async () => {
    const mark = red.logs.length;
    const call = new FakeTwilioCall(red);
    const answer = await call.start(noCreds.token);
    assert.equal(answer.status, 200);
    assert.deepEqual(answer.verbs.map((v) => v.verb), ['Hangup']);
    await eventually(() => logsSince(red, mark).some((l) => /4008 ModuleMissingConfiguration: Account SID and Auth Token/.test(l)), 3000, 'the 4008 log line');
    assert.equal(await sessionOfCall(red, call.callSid), undefined);
  });

  it('ends a waiting Session when a status callback says the caller hung up', async () => {
    const call = new FakeTwilioCall(red);
    await call.start(ivr.token);
    assert.equal((await sessionOfCall(red, call.callSid)).state, 'waiting');
    const answer = await call.next('venv', { CallStatus: 'completed', CallDuration: '12' });
    assert.equal(answer.status, 200);
    assert.deepEqual(answer.verbs, []);
    const session = await sessionOfCall(red, call.callSid);
    assert.equal(session.state, 'ended');
    assert.match(session.endReason, /CallStatus completed/);
  });

  it('logs the start URL on deploy and never logs a credential', async () => {
    assert.ok(red.logs.some((l) => l.includes(`Voice start URL: https://ivr.example.com/base/api/TelcoModule/Voice/start/${pub.token}`)));
    assert.ok(red.logs.some((l) => l.includes(`Voice start URL: /api/TelcoModule/Voice/start/${ivr.token}`)));
    assert.ok(!red.logs.some((l) => l.includes(AUTH_TOKEN) || l.includes('signing-secret-override')));
  });
});
