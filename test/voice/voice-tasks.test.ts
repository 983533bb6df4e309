import should from 'should';
import { NodeRed, eventually } from '../harness/node-red';
import { chain, node, tab } from '../harness/flows';
import { loopbackEnvironment, startWithLoopback } from '../harness/loopback';
import { ACCOUNT_SID, AUTH_TOKEN, FakeTwilioCall } from '../fakes/twilio-voice-caller';
import { FakeTwilioApi } from '../fakes/twilio-api';
import { logsSince, sessionOfCall, voiceEnvironment } from '../harness/voice-flows';

const PN = 'PN' + 'a'.repeat(32);

/** The voice Tasks, the test chat, auto-deploy, with the httpNode root moved to /hooks. */
describe('voice Tasks, test chat and auto-deploy', function () {
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

  before(async function () {
    api = await FakeTwilioApi.start();
    api.addNumber(PN, '+14155550999');
    red = await startWithLoopback({ settings: { httpNodeRoot: '/hooks' } });
    auto = voiceEnvironment('vauto', { autoDeploy: true, phoneNumberSid: PN, publicBaseUrl: 'https://ivr.example.com', apiUrl: api.url });
    deployMark = red.logs.length;
    await red.deploy([
      tasks,
      bad,
      wrong,
      auto,
      shared,
      typed,
      typedBad,
      voiceEnvironment('vskipsid', { autoDeploy: true, phoneNumberSid: 'XX123', publicBaseUrl: 'https://ivr.example.com', apiUrl: api.url }),
      voiceEnvironment('vskipurl', { autoDeploy: true, phoneNumberSid: PN, apiUrl: api.url }),
      voiceEnvironment('vskipcreds', { autoDeploy: true, phoneNumberSid: PN, publicBaseUrl: 'https://ivr.example.com', apiUrl: api.url }, { authToken: '' }),
      voiceEnvironment('vunknownpn', { autoDeploy: true, phoneNumberSid: 'PN' + 'b'.repeat(32), publicBaseUrl: 'https://ivr.example.com', apiUrl: api.url }),
      loopbackEnvironment('lenv'),

      tab('pTasks', 'Voicemail'),
      node('telco-call-start', 'cs', 'pTasks', { environment: 'vtasks', variable: 'call', testData: { from: '+15551234567', fromCountry: 'US' } }, [['play']]),
      node('telco-voice-play', 'play', 'pTasks', { mediaUrl: 'https://cdn.example.com/{call.fromCountry}/hello.mp3', loop: 2 }, [['rec'], []]),
      node(
        'telco-voice-record',
        'rec',
        'pTasks',
        { maxLength: 120, playBeep: false, trim: 'do-not-trim', transcribe: true, urlVariable: 'vm', sidVariable: 'vmsid' },
        [['thanks'], ['norec']],
      ),
      node('output-task', 'thanks', 'pTasks', { text: 'Saved {vmsid}.' }, [['dial'], []]),
      node('telco-voice-dial', 'dial', 'pTasks', { destination: '+1 (415) 555-0100', timeout: 20, record: 'record-from-answer-dual', callerId: '{call.to}' }, [
        ['bye'],
        [],
      ]),
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
      node('telco-voice-dial', 'tdial', 'pTyped', { destination: 'agent', destinationType: 'msg', callerId: 'CALLER_ID', callerIdType: 'env', timeout: 15 }, [
        ['tend'],
        [],
      ]),
      node('end-task', 'tend', 'pTyped', {}),

      // Typed fields are checked like text: a msg value that is not E.164, or not a URL, takes the error branch with 3005.
      tab('pTypedBad', 'Typed fields, bad values'),
      node('telco-call-start', 'tbs', 'pTypedBad', { environment: 'vtypedbad' }, [['tbset']]),
      node(
        'change',
        'tbset',
        'pTypedBad',
        {
          rules: [
            { t: 'set', p: 'agent', pt: 'msg', to: '{call.from}', tot: 'str' },
            { t: 'set', p: 'audio', pt: 'msg', to: 'ftp://cdn.example.com/a.mp3', tot: 'str' },
          ],
        },
        [['tbplay']],
      ),
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
      ...chain('pShared', [
        ['session-start', 'sh', { voice: 'vshared' }],
        ['output-task', 'shout', { text: 'Hello {execution.channelSender}{call.from}.' }],
        ['end-task', 'shend'],
      ]),

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
  after(async function () {
    await red?.close();
    await api?.close();
  });

  async function startTest(startId: string, testData?: Record<string, unknown>) {
    const res = await red.admin('POST', '/channel-sessions/test-sessions', { start: startId, testData });
    should(res.status).equal(201, res.text);
    return res.body;
  }

  it('plays audio with placeholders and Loop, records with the limits, then writes the recording URL and id', async function () {
    const call = new FakeTwilioCall(red);
    const first = await call.post(`/hooks/api/TelcoModule/Voice/start/${tasks.token}`, { ...call.baseParams(), FromCountry: 'FR' });
    should(first.status).equal(200, first.text);
    should(first.verbs.map((v) => [v.verb, v.attrs, v.text])).eql([
      ['Play', { loop: '2' }, 'https://cdn.example.com/FR/hello.mp3'],
      [
        'Record',
        { action: '/hooks/api/TelcoModule/Voice/next/vtasks', method: 'POST', maxLength: '120', playBeep: 'false', trim: 'do-not-trim', transcribe: 'true' },
        '',
      ],
      ['Redirect', { method: 'POST' }, '/hooks/api/TelcoModule/Voice/next/vtasks?noRecording=1'],
    ]);
    const waiting = await sessionOfCall(red, call.callSid);
    should(waiting.waitingAt.nodeId).equal('rec', 'the Session waits until the recording completes');

    const recordingUrl = `https://api.twilio.com/2010-04-01/Accounts/${ACCOUNT_SID}/Recordings/RE123`;
    const next = await call.follow(first.verbs[1].attrs.action, { RecordingUrl: recordingUrl, RecordingSid: 'RE123', RecordingDuration: '7', Digits: '#' });
    should(next.verbs.map((v) => [v.verb, v.text])).eql([
      ['Say', 'Saved RE123.'],
      ['Dial', '+14155550100'],
      ['Hangup', ''],
    ]);
    should(next.verbs[0].attrs.voice).equal('Polly.Amy');
    should(next.verbs[1].attrs).eql({ timeout: '20', record: 'record-from-answer-dual', callerId: '+14155550999' });
    const done = await sessionOfCall(red, call.callSid);
    should(done.vars.vm).equal(recordingUrl);
    should(done.vars.vmsid).equal('RE123');
    should(done.state).equal('completed');
  });

  it('sends Record to its error branch with 4009 when the caller leaves an empty recording (the provider goes on to the Redirect after Record)', async function () {
    const call = new FakeTwilioCall(red);
    const first = await call.post(`/hooks/api/TelcoModule/Voice/start/${tasks.token}`, call.baseParams());
    should(first.verbs.map((v) => v.verb)).eql(['Play', 'Record', 'Redirect']);
    // An empty recording: the provider requests no action URL and follows the next verb instead.
    const next = await call.follow(first.verbs[2].text);
    should(next.verbs.map((v) => [v.verb, v.text])).eql([
      ['Say', 'No recording, error 4009.'],
      ['Hangup', ''],
    ]);
    const done = await sessionOfCall(red, call.callSid);
    should(done.state).equal('completed');
    should(done.log.find((e: any) => e.code === 4009).message).equal('The recording ended without audio');
  });

  it('refuses a Dial destination that is not E.164 with 3005 on the error branch, and Loop 0 plays until hang-up', async function () {
    const call = new FakeTwilioCall(red);
    const answer = await call.post(`/hooks/api/TelcoModule/Voice/start/${bad.token}`, { ...call.baseParams(), CallerName: 'Bob' });
    should(answer.verbs.map((v) => [v.verb, v.attrs.loop, v.text])).eql([
      ['Play', '0', 'https://cdn.example.com/music.mp3'],
      ['Say', undefined, 'Dial failed with 3005.'],
      ['Hangup', undefined, ''],
    ]);
    const session = await sessionOfCall(red, call.callSid);
    should(session.log.find((e: any) => e.code === 3005).message).match(/"Bob" is not an E\.164 number/);
  });

  it("reads typed fields: Media URL from flow context, Destination from msg (set by a change node), Caller ID from the tab's env", async function () {
    const call = new FakeTwilioCall(red);
    const answer = await call.post(`/hooks/api/TelcoModule/Voice/start/${typed.token}`, call.baseParams());
    should(answer.status).equal(200, answer.text);
    should(answer.verbs.map((v) => [v.verb, v.text])).eql([
      ['Play', 'https://cdn.example.com/hold.mp3'],
      ['Dial', '+442079460000'],
      ['Hangup', ''],
    ]);
    should(answer.verbs[1].attrs).eql({ timeout: '15', record: 'do-not-record', callerId: '+14155550199' });
  });

  it('checks typed values like text: a msg URL that is not http(s) and a msg destination that is not E.164 (used as is: {call.from} is not resolved) give 3005', async function () {
    const call = new FakeTwilioCall(red);
    const answer = await call.post(`/hooks/api/TelcoModule/Voice/start/${typedBad.token}`, call.baseParams());
    should(answer.verbs.map((v) => [v.verb, v.text])).eql([
      ['Say', 'Play failed with 3005.'],
      ['Say', 'Dial failed with 3005.'],
      ['Hangup', ''],
    ]);
    const session = await sessionOfCall(red, call.callSid);
    const messages = session.log.filter((e: any) => e.code === 3005).map((e: any) => e.message);
    should(messages.some((m: string) => /MediaUrl "ftp:\/\/cdn\.example\.com\/a\.mp3" is not an http\(s\) URL/.test(m))).be.true(messages.join(' | '));
    should(messages.some((m: string) => /Destination "\{callfrom\}" is not an E\.164 number/.test(m))).be.true(messages.join(' | '));
  });

  it('runs the call start in the test chat: {call} from test data on the Chat Channel, Play/Record/Dial as chat lines, Record takes the typed text', async function () {
    const started = await startTest('cs');
    should(started.state).equal('waiting');
    should(started.waitingAt.nodeId).equal('rec');
    should({ ...started.vars.call, callId: undefined }).eql({
      from: '+15551234567',
      to: '+15005550001',
      callId: undefined,
      direction: 'inbound',
      callerName: '',
      fromCountry: 'US',
      channel: 'Chat',
      isTest: true,
    });
    should(started.vars.execution.channelSender).equal('+15551234567');
    should(started.transcript.map((l: any) => [l.from, l.kind, l.text])).eql([
      ['bot', 'message', '[audio] https://cdn.example.com/US/hello.mp3 (x2)'],
      ['bot', 'prompt', '[recording, up to 120 s]'],
    ]);
    const res = await red.admin('POST', `/channel-sessions/test-sessions/${started.id}/messages`, { text: 'my voicemail' });
    const done = res.body;
    should(done.state).equal('completed');
    should(done.vars.vm).equal('my voicemail');
    should(done.vars.vmsid).match(/^RE-test-/);
    const texts = done.transcript.map((l: any) => l.text);
    should(texts).containEql(`Saved ${done.vars.vmsid}.`);
    should(texts).containEql('[transferring the call to +14155550100]');
  });

  it('uses a sample caller number in the test chat without test data, and InputTask takes the typed text', async function () {
    const started = await startTest('as');
    should(started.vars.call.from).equal('+15005550006');
    should(started.vars.call.isTest).equal(true);
    should(started.transcript.map((l: any) => [l.kind, l.text])).eql([['prompt', 'Your name?']]);
    const done = (await red.admin('POST', `/channel-sessions/test-sessions/${started.id}/messages`, { text: 'Ada' })).body;
    should(done.transcript.some((l: any) => l.text === 'Hi Ada, calling from +15005550006.')).be.true();
  });

  it('runs a Process built with the shared Start on a call: sender and recipient recorded, no {call}', async function () {
    const call = new FakeTwilioCall(red, { from: '+14155550123' });
    const answer = await call.post(`/hooks/api/TelcoModule/Voice/start/${shared.token}`, call.baseParams());
    should(answer.verbs.map((v) => [v.verb, v.text])).eql([
      ['Say', 'Hello +14155550123.'],
      ['Hangup', ''],
    ]);
    const session = await sessionOfCall(red, call.callSid);
    should(session.vars.call).equal(undefined);
    should(session.vars.execution.channelRecipient).equal('+14155550999');
  });

  it("a call reaching a Process whose only start is another Channel's ends with 8025 and says nothing", async function () {
    const call = new FakeTwilioCall(red);
    const answer = await call.post(`/hooks/api/TelcoModule/Voice/start/${wrong.token}`, call.baseParams());
    should(answer.status).equal(200);
    should(answer.verbs).eql([]);
    const session = await sessionOfCall(red, call.callSid);
    should(session.state).equal('ended');
    should(session.log.at(-1).code).equal(8025);
  });

  it('telco-call-start bound to an Environment of another kind serves nothing: a message there starts nothing', async function () {
    // Since a start never uses an Environment of another kind (red status at deploy), a Session of
    // another Channel cannot reach a call start any more: 8025 is left to starts of one module.
    const outcome = (await red.request('POST', '/hooks/loopback/lenv/someone', { text: 'hello' })).body;
    should(outcome.kind).equal('refused');
    should(outcome.reason).match(/No Process has a start for Environment/);
  });

  it("auto-deploy sets the number's voice URL (and status callback) through the real twilio client at apiUrl, and logs it", async function () {
    const request = await eventually(
      () => api.requests.find((r) => r.path.endsWith(`/IncomingPhoneNumbers/${PN}.json`) && r.form.VoiceUrl?.includes(auto.token)),
      5000,
      'the update request',
    );
    should(request.method).equal('POST');
    should(request.path).equal(`/2010-04-01/Accounts/${ACCOUNT_SID}/IncomingPhoneNumbers/${PN}.json`);
    should(request.form).eql({
      VoiceUrl: `https://ivr.example.com/hooks/api/TelcoModule/Voice/start/${auto.token}`,
      VoiceMethod: 'POST',
      StatusCallback: 'https://ivr.example.com/hooks/api/TelcoModule/Voice/next/vauto',
      StatusCallbackMethod: 'POST',
    });
    should(request.username).equal(ACCOUNT_SID);
    should(request.password).equal(AUTH_TOKEN);
    should(api.numbers.get(PN)?.voice_url).equal(request.form.VoiceUrl);
    await eventually(
      () =>
        logsSince(red, deployMark).some((l) =>
          l.includes(`Auto-deploy: phone number ${PN} now sends its calls to https://ivr.example.com/hooks/api/TelcoModule/Voice/start/${auto.token}`),
        ),
      3000,
      'the log line',
    );
  });

  it('auto-deploy skips with a log line when the SID does not begin with PN or no public base URL is set, and logs 4008 without credentials', async function () {
    const lines = () => logsSince(red, deployMark);
    await eventually(
      () => lines().some((l) => /Voice vskipsid\].*Auto-deploy skipped: Phone Number SID "XX123" does not begin with PN/.test(l)),
      3000,
      'the SID skip line',
    );
    await eventually(() => lines().some((l) => /Voice vskipurl\].*Auto-deploy skipped: no Public base URL/.test(l)), 3000, 'the URL skip line');
    await eventually(
      () => lines().some((l) => /Voice vskipcreds\].*4008 ModuleMissingConfiguration: auto-deploy needs Auth Token/.test(l)),
      3000,
      'the 4008 line',
    );
    await eventually(() => lines().some((l) => /Voice vunknownpn\].*4001 ModuleException: auto-deploy of PNb+ failed/.test(l)), 3000, 'the API failure line');
    const updates = api.requests.filter((r) => r.path.includes('/IncomingPhoneNumbers/'));
    should(updates.map((r) => r.path.split('/').pop())).eql([`${PN}.json`, `PN${'b'.repeat(32)}.json`], 'skipped Environments sent nothing');
    should(api.requests.every((r) => r.password === AUTH_TOKEN && r.username === ACCOUNT_SID)).be.true();
  });
});
