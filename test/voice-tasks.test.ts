import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { NodeRed, eventually } from './harness/node-red';
import { chain, node, tab } from './harness/flows';
import { loopbackEnvironment, startWithLoopback } from './harness/loopback';
import { ACCOUNT_SID, AUTH_TOKEN, FakeTwilioCall } from './fakes/twilio-voice-caller';
import { FakeTwilioApi } from './fakes/twilio-api';
import { logsSince, sessionOfCall, voiceEnvironment } from './voice-flows';

const PN = 'PN' + 'a'.repeat(32);

/** The voice Tasks, the test chat, auto-deploy, with the httpNode root moved to /hooks. */
describe('voice Tasks, test chat and auto-deploy', () => {
  let red: NodeRed;
  let api: FakeTwilioApi;
  const tasks = voiceEnvironment('vtasks', { defaultVoice: 'Polly.Amy' });
  const bad = voiceEnvironment('vbad');
  const wrong = voiceEnvironment('vwrong');
  const shared = voiceEnvironment('vshared');
  const typed = voiceEnvironment('vtyped');
  const typedBad = voiceEnvironment('vtypedbad');
  let deployMark = 0;
  let auto: ReturnType<typeof voiceEnvironment>;

  before(async () => {
    api = await FakeTwilioApi.start();
    api.addNumber(PN, '+14155550999');
    red = await startWithLoopback({ settings: { httpNodeRoot: '/hooks' } });
    auto = voiceEnvironment('vauto', { autoDeploy: true, phoneNumberSid: PN, publicBaseUrl: 'https://ivr.example.com', apiUrl: api.url });
    deployMark = red.logs.length;
    await red.deploy([
      tasks, bad, wrong, auto, shared, typed, typedBad,
      voiceEnvironment('vskipsid', { autoDeploy: true, phoneNumberSid: 'XX123', publicBaseUrl: 'https://ivr.example.com', apiUrl: api.url }),
      voiceEnvironment('vskipurl', { autoDeploy: true, phoneNumberSid: PN, apiUrl: api.url }),
      voiceEnvironment('vskipcreds', { autoDeploy: true, phoneNumberSid: PN, publicBaseUrl: 'https://ivr.example.com', apiUrl: api.url }, { authToken: '' }),
      voiceEnvironment('vunknownpn', { autoDeploy: true, phoneNumberSid: 'PN' + 'b'.repeat(32), publicBaseUrl: 'https://ivr.example.com', apiUrl: api.url }),
      loopbackEnvironment('lenv'),

      tab('pTasks', 'Voicemail'),
      node('telco-call-start', 'cs', 'pTasks', { environment: 'vtasks', variable: 'call', testData: { from: '+15551234567', fromCountry: 'US' } }, [['play']]),
      node('telco-voice-play', 'play', 'pTasks', { mediaUrl: 'https://cdn.example.com/{call.fromCountry}/hello.mp3', loop: 2 }, [['rec'], []]),
      node('telco-voice-record', 'rec', 'pTasks', { maxLength: 120, playBeep: false, trim: 'do-not-trim', transcribe: true, urlVariable: 'vm', sidVariable: 'vmsid' }, [['thanks'], ['norec']]),
      node('output-task', 'thanks', 'pTasks', { text: 'Saved {vmsid}.' }, [['dial'], []]),
      node('telco-voice-dial', 'dial', 'pTasks', { destination: '+1 (415) 555-0100', timeout: 20, record: 'record-from-answer-dual', callerId: '{call.to}' }, [['bye'], []]),
      node('output-task', 'norec', 'pTasks', { text: 'No recording, error {error.code}.' }, [['bye'], []]),
      node('end-task', 'bye', 'pTasks', {}),

      tab('pBad', 'Bad dial'),
      node('telco-call-start', 'bs', 'pBad', { environment: 'vbad' }, [['loop0']]),
      node('telco-voice-play', 'loop0', 'pBad', { mediaUrl: 'https://cdn.example.com/music.mp3', loop: 0 }, [['baddial'], []]),
      node('telco-voice-dial', 'baddial', 'pBad', { destination: '{call.callerName}' }, [['bend'], ['berr']]),
      node('output-task', 'berr', 'pBad', { text: 'Dial failed with {error.code}.' }, [['bend'], []]),
      node('end-task', 'bend', 'pBad', {}),

      // Typed fields: the audio URL from flow context, the destination from msg (a change node), the caller id from the tab's env.
      { ...tab('pTyped', 'Typed fields'), env: [{ name: 'CALLER_ID', value: '+1 415 555 0199', type: 'str' }] },
      node('telco-call-start', 'ts', 'pTyped', { environment: 'vtyped' }, [['tflow']]),
      node('function', 'tflow', 'pTyped', { func: 'flow.set("holdMusic", "https://cdn.example.com/hold.mp3"); return msg;', outputs: 1 }, [['tset']]),
      node('change', 'tset', 'pTyped', { rules: [{ t: 'set', p: 'agent', pt: 'msg', to: '+44 20 7946 0000', tot: 'str' }] }, [['tplay']]),
      node('telco-voice-play', 'tplay', 'pTyped', { mediaUrl: 'holdMusic', mediaUrlType: 'flow', loop: 1 }, [['tdial'], []]),
      node('telco-voice-dial', 'tdial', 'pTyped', { destination: 'agent', destinationType: 'msg', callerId: 'CALLER_ID', callerIdType: 'env', timeout: 15 }, [['tend'], []]),
      node('end-task', 'tend', 'pTyped', {}),

      // Typed fields are checked like text: a msg value that is not E.164, or not a URL, takes the error branch with 3005.
      tab('pTypedBad', 'Typed fields, bad values'),
      node('telco-call-start', 'tbs', 'pTypedBad', { environment: 'vtypedbad' }, [['tbset']]),
      node('change', 'tbset', 'pTypedBad', { rules: [
        { t: 'set', p: 'agent', pt: 'msg', to: '{call.from}', tot: 'str' },
        { t: 'set', p: 'audio', pt: 'msg', to: 'ftp://cdn.example.com/a.mp3', tot: 'str' },
      ] }, [['tbplay']]),
      node('telco-voice-play', 'tbplay', 'pTypedBad', { mediaUrl: 'audio', mediaUrlType: 'msg' }, [[], ['tbplayerr']]),
      node('output-task', 'tbplayerr', 'pTypedBad', { text: 'Play failed with {error.code}.' }, [['tbdial'], []]),
      node('telco-voice-dial', 'tbdial', 'pTypedBad', { destination: 'agent', destinationType: 'msg' }, [[], ['tbdialerr']]),
      node('output-task', 'tbdialerr', 'pTypedBad', { text: 'Dial failed with {error.code}.' }, [['tbend'], []]),
      node('end-task', 'tbend', 'pTypedBad', {}),

      tab('pAsk', 'Ask in chat'),
      ...chain('pAsk', [
        ['telco-call-start', 'as', { environment: 'vbad' }],
        ['input-task', 'aask', { prompt: 'Your name?', resultVariable: 'name' }],
        ['output-task', 'aout', { text: 'Hi {name}, calling from {call.from}.' }],
        ['end-task', 'aend'],
      ]),

      tab('pShared', 'Shared start'),
      ...chain('pShared', [['session-start', 'sh', { voice: 'vshared' }], ['output-task', 'shout', { text: 'Hello {execution.channelSender}{call.from}.' }], ['end-task', 'shend']]),

      // A Process whose only start bound to vwrong is another Channel's start.
      tab('pWrong', 'Wrong channel'),
      node('loopback-start', 'ws', 'pWrong', { environment: 'vwrong' }, [['wout']]),
      node('output-task', 'wout', 'pWrong', { text: 'never said' }, [[], []]),
      // A call start bound to a loopback Environment: a Loopback Session reaches it.
      tab('pCallOnLoop', 'Call start on loopback'),
      node('telco-call-start', 'cl', 'pCallOnLoop', { environment: 'lenv' }, [['clout']]),
      node('output-task', 'clout', 'pCallOnLoop', { text: 'never said' }, [[], []]),
    ]);
  });
  after(async () => {
    await red?.close();
    await api?.close();
  });

  async function startTest(startId: string, testData?: Record<string, unknown>) {
    const res = await red.admin('POST', '/channel-sessions/test-sessions', { start: startId, testData });
    assert.equal(res.status, 201, res.text);
    return res.body;
  }

  it('plays audio with placeholders and Loop, records with the limits, then writes the recording URL and id', async () => {
    const call = new FakeTwilioCall(red);
    const first = await call.post(`/hooks/api/TelcoModule/Voice/start/${tasks.token}`, { ...call.baseParams(), FromCountry: 'FR' });
    assert.equal(first.status, 200, first.text);
    assert.deepEqual(first.verbs.map((v) => [v.verb, v.attrs, v.text]), [
      ['Play', { loop: '2' }, 'https://cdn.example.com/FR/hello.mp3'],
      ['Record', { action: '/hooks/api/TelcoModule/Voice/next/vtasks', method: 'POST', maxLength: '120', playBeep: 'false', trim: 'do-not-trim', transcribe: 'true' }, ''],
    ]);
    const waiting = await sessionOfCall(red, call.callSid);
    assert.equal(waiting.waitingAt.nodeId, 'rec', 'the Session waits until the recording completes');

    const recordingUrl = `https://api.twilio.com/2010-04-01/Accounts/${ACCOUNT_SID}/Recordings/RE123`;
    const next = await call.follow(first.verbs[1].attrs.action, { RecordingUrl: recordingUrl, RecordingSid: 'RE123', RecordingDuration: '7', Digits: '#' });
    assert.deepEqual(next.verbs.map((v) => [v.verb, v.text]), [['Say', 'Saved RE123.'], ['Dial', '+14155550100'], ['Hangup', '']]);
    assert.equal(next.verbs[0].attrs.voice, 'Polly.Amy');
    assert.deepEqual(next.verbs[1].attrs, { timeout: '20', record: 'record-from-answer-dual', callerId: '+14155550999' });
    const done = await sessionOfCall(red, call.callSid);
    assert.equal(done.vars.vm, recordingUrl);
    assert.equal(done.vars.vmsid, 'RE123');
    assert.equal(done.state, 'completed');
  });

  it('sends Record to its error branch with 4009 when the provider reports no recording', async () => {
    const call = new FakeTwilioCall(red);
    await call.post(`/hooks/api/TelcoModule/Voice/start/${tasks.token}`, call.baseParams());
    const next = await call.post('/hooks/api/TelcoModule/Voice/next/vtasks', call.baseParams());
    assert.deepEqual(next.verbs.map((v) => [v.verb, v.text]), [['Say', 'No recording, error 4009.'], ['Hangup', '']]);
  });

  it('refuses a Dial destination that is not E.164 with 3005 on the error branch, and Loop 0 plays until hang-up', async () => {
    const call = new FakeTwilioCall(red);
    const answer = await call.post(`/hooks/api/TelcoModule/Voice/start/${bad.token}`, { ...call.baseParams(), CallerName: 'Bob' });
    assert.deepEqual(answer.verbs.map((v) => [v.verb, v.attrs.loop, v.text]), [
      ['Play', '0', 'https://cdn.example.com/music.mp3'],
      ['Say', undefined, 'Dial failed with 3005.'],
      ['Hangup', undefined, ''],
    ]);
    const session = await sessionOfCall(red, call.callSid);
    assert.match(session.log.find((e: any) => e.code === 3005).message, /"Bob" is not an E\.164 number/);
  });

  it('reads typed fields: Media URL from flow context, Destination from msg (set by a change node), Caller ID from the tab\'s env', async () => {
    const call = new FakeTwilioCall(red);
    const answer = await call.post(`/hooks/api/TelcoModule/Voice/start/${typed.token}`, call.baseParams());
    assert.equal(answer.status, 200, answer.text);
    assert.deepEqual(answer.verbs.map((v) => [v.verb, v.text]), [['Play', 'https://cdn.example.com/hold.mp3'], ['Dial', '+442079460000'], ['Hangup', '']]);
    assert.deepEqual(answer.verbs[1].attrs, { timeout: '15', record: 'do-not-record', callerId: '+14155550199' });
  });

  it('checks typed values like text: a msg URL that is not http(s) and a msg destination that is not E.164 (used as is: {call.from} is not resolved) give 3005', async () => {
    const call = new FakeTwilioCall(red);
    const answer = await call.post(`/hooks/api/TelcoModule/Voice/start/${typedBad.token}`, call.baseParams());
    assert.deepEqual(answer.verbs.map((v) => [v.verb, v.text]), [['Say', 'Play failed with 3005.'], ['Say', 'Dial failed with 3005.'], ['Hangup', '']]);
    const session = await sessionOfCall(red, call.callSid);
    const messages = session.log.filter((e: any) => e.code === 3005).map((e: any) => e.message);
    assert.ok(messages.some((m: string) => /MediaUrl "ftp:\/\/cdn\.example\.com\/a\.mp3" is not an http\(s\) URL/.test(m)), messages.join(' | '));
    assert.ok(messages.some((m: string) => /Destination "\{callfrom\}" is not an E\.164 number/.test(m)), messages.join(' | '));
  });

  it('runs the call start in the test chat: {call} from test data on the Chat Channel, Play/Record/Dial as chat lines, Record takes the typed text', async () => {
    const started = await startTest('cs');
    assert.equal(started.state, 'waiting');
    assert.equal(started.waitingAt.nodeId, 'rec');
    assert.deepEqual({ ...started.vars.call, callId: undefined }, {
      from: '+15551234567', to: '+15005550001', callId: undefined, direction: 'inbound', callerName: '', fromCountry: 'US', channel: 'Chat', isTest: true,
    });
    assert.equal(started.vars.execution.channelSender, '+15551234567');
    assert.deepEqual(started.transcript.map((l: any) => [l.from, l.kind, l.text]), [
      ['bot', 'message', '[audio] https://cdn.example.com/US/hello.mp3 (x2)'],
      ['bot', 'prompt', '[recording, up to 120 s]'],
    ]);
    const res = await red.admin('POST', `/channel-sessions/test-sessions/${started.id}/messages`, { text: 'my voicemail' });
    const done = res.body;
    assert.equal(done.state, 'completed');
    assert.equal(done.vars.vm, 'my voicemail');
    assert.match(done.vars.vmsid, /^RE-test-/);
    const texts = done.transcript.map((l: any) => l.text);
    assert.ok(texts.includes(`Saved ${done.vars.vmsid}.`), texts.join(' | '));
    assert.ok(texts.includes('[transferring the call to +14155550100]'), texts.join(' | '));
  });

  it('uses a sample caller number in the test chat without test data, and InputTask takes the typed text', async () => {
    const started = await startTest('as');
    assert.equal(started.vars.call.from, '+15005550006');
    assert.equal(started.vars.call.isTest, true);
    assert.deepEqual(started.transcript.map((l: any) => [l.kind, l.text]), [['prompt', 'Your name?']]);
    const done = (await red.admin('POST', `/channel-sessions/test-sessions/${started.id}/messages`, { text: 'Ada' })).body;
    assert.ok(done.transcript.some((l: any) => l.text === 'Hi Ada, calling from +15005550006.'));
  });

  it('runs a Process built with the shared Start on a call: sender and recipient recorded, no {call}', async () => {
    const call = new FakeTwilioCall(red, { from: '+14155550123' });
    const answer = await call.post(`/hooks/api/TelcoModule/Voice/start/${shared.token}`, call.baseParams());
    assert.deepEqual(answer.verbs.map((v) => [v.verb, v.text]), [['Say', 'Hello +14155550123.'], ['Hangup', '']]);
    const session = await sessionOfCall(red, call.callSid);
    assert.equal(session.vars.call, undefined);
    assert.equal(session.vars.execution.channelRecipient, '+14155550999');
  });

  it('a call reaching a Process whose only start is another Channel\'s ends with 8025 and says nothing', async () => {
    const call = new FakeTwilioCall(red);
    const answer = await call.post(`/hooks/api/TelcoModule/Voice/start/${wrong.token}`, call.baseParams());
    assert.equal(answer.status, 200);
    assert.deepEqual(answer.verbs, []);
    const session = await sessionOfCall(red, call.callSid);
    assert.equal(session.state, 'ended');
    assert.equal(session.log.at(-1).code, 8025);
  });

  it('telco-call-start refuses with 8025 when a Session of another Channel reaches it', async () => {
    // The loopback route lives under the httpNode root like ours.
    const outcome = (await red.request('POST', '/hooks/loopback/lenv/someone', { text: 'hello' })).body;
    assert.equal(outcome.kind, 'started');
    const session = (await red.admin('GET', `/channel-sessions/sessions/${outcome.sessionId}`)).body;
    assert.equal(session.state, 'ended');
    assert.equal(session.log.at(-1).code, 8025);
    assert.equal(session.log.at(-1).nodeId, 'cl');
  });

  it('auto-deploy sets the number\'s voice URL (and status callback) through the real twilio client at apiUrl, and logs it', async () => {
    const request = await eventually(() => api.requests.find((r) => r.path.endsWith(`/IncomingPhoneNumbers/${PN}.json`) && r.form.VoiceUrl?.includes(auto.token)), 5000, 'the update request');
    assert.equal(request.method, 'POST');
    assert.equal(request.path, `/2010-04-01/Accounts/${ACCOUNT_SID}/IncomingPhoneNumbers/${PN}.json`);
    assert.deepEqual(request.form, {
      VoiceUrl: `https://ivr.example.com/hooks/api/TelcoModule/Voice/start/${auto.token}`,
      VoiceMethod: 'POST',
      StatusCallback: 'https://ivr.example.com/hooks/api/TelcoModule/Voice/next/vauto',
      StatusCallbackMethod: 'POST',
    });
    assert.equal(request.username, ACCOUNT_SID);
    assert.equal(request.password, AUTH_TOKEN);
    assert.equal(api.numbers.get(PN)?.voice_url, request.form.VoiceUrl);
    await eventually(() => logsSince(red, deployMark).some((l) => l.includes(`Auto-deploy: phone number ${PN} now sends its calls to https://ivr.example.com/hooks/api/TelcoModule/Voice/start/${auto.token}`)), 3000, 'the log line');
  });

  it('auto-deploy skips with a log line when the SID does not begin with PN or no public base URL is set, and logs 4008 without credentials', async () => {
    const lines = () => logsSince(red, deployMark);
    await eventually(() => lines().some((l) => /Voice vskipsid\].*Auto-deploy skipped: Phone Number SID "XX123" does not begin with PN/.test(l)), 3000, 'the SID skip line');
    await eventually(() => lines().some((l) => /Voice vskipurl\].*Auto-deploy skipped: no Public base URL/.test(l)), 3000, 'the URL skip line');
    await eventually(() => lines().some((l) => /Voice vskipcreds\].*4008 ModuleMissingConfiguration: auto-deploy needs Auth Token/.test(l)), 3000, 'the 4008 line');
    await eventually(() => lines().some((l) => /Voice vunknownpn\].*4001 ModuleException: auto-deploy of PNb+ failed/.test(l)), 3000, 'the API failure line');
    const updates = api.requests.filter((r) => r.path.includes('/IncomingPhoneNumbers/'));
    assert.deepEqual(updates.map((r) => r.path.split('/').pop()), [`${PN}.json`, `PN${'b'.repeat(32)}.json`], 'skipped Environments sent nothing');
    assert.ok(api.requests.every((r) => r.password === AUTH_TOKEN && r.username === ACCOUNT_SID));
  });
});
