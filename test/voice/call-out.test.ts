import should from 'should';
import { eventually, NodeRed } from '../harness/node-red';
import { chain, node, tab } from '../harness/flows';
import { FakeTwilioApi, type CreatedCall } from '../fakes/twilio-api';
import { reported, reportedOnce, reporter, requestCall, requestEntry } from '../harness/call-out-flows';
import { sessionOfCall, voiceEnvironment } from '../harness/voice-flows';
import { AUTH_TOKEN } from '../fakes/twilio-voice-caller';

const CALLER_ID = '+14155550100';

/**
 * Call out through a real Node-RED: the request goes to the fake Calls API, the answered call's
 * webhooks and the status callbacks come back signed as Twilio signs them.
 */
describe('voice: Call out (telco-call-out)', function () {
  this.timeout(60000);
  let red: NodeRed;
  let api: FakeTwilioApi;
  let env: ReturnType<typeof voiceEnvironment>;
  let limited: ReturnType<typeof voiceEnvironment>;

  const callsTo = (to: string): CreatedCall[] => api.calls.filter((c) => c.form.To === to);
  const createPosts = () => api.requests.filter((r) => r.path.endsWith('/Calls.json'));
  const placed = (to: string) => eventually(() => callsTo(to)[0], 10000, `a call placed to ${to}`);

  before(async function () {
    api = await FakeTwilioApi.start();
    red = await NodeRed.start({ settings: { channelSessions: { callOutTimeout: 1 } } });
    env = voiceEnvironment('vout', { publicBaseUrl: red.url('').replace(/\/$/, ''), apiUrl: api.url, callerId: CALLER_ID, callsPerSecond: 20 });
    const noCaller = voiceEnvironment('vnocaller', { publicBaseUrl: red.url('').replace(/\/$/, ''), apiUrl: api.url });
    const noCreds = voiceEnvironment('vnocreds', { publicBaseUrl: red.url('').replace(/\/$/, ''), apiUrl: api.url, callerId: CALLER_ID }, { authToken: '' });
    // An API key SID pasted as the Account SID: twilio's client refuses to be built with it.
    const keySid = voiceEnvironment(
      'vsk',
      { publicBaseUrl: red.url('').replace(/\/$/, ''), apiUrl: api.url, callerId: CALLER_ID },
      { accountSid: 'SK' + '1'.repeat(32) },
    );
    const noScheme = voiceEnvironment('vnoscheme', { publicBaseUrl: red.url('').replace(/\/$/, ''), apiUrl: 'localhost:3000', callerId: CALLER_ID });
    limited = voiceEnvironment('vmax', {
      publicBaseUrl: red.url('').replace(/\/$/, ''),
      apiUrl: api.url,
      callerId: CALLER_ID,
      callsPerSecond: 20,
      maxSessions: 1,
    });
    await red.deploy([
      env,
      noScheme,
      limited,
      noCaller,
      noCreds,
      keySid,
      tab('pOut', 'Reminders'),
      ...requestEntry('pOut', 'r1', '/call-plain', 'co'),
      node('telco-call-out', 'co', 'pOut', { environment: 'vout', variable: 'call', to: 'to', toType: 'msg', machineDetection: '', ringTimeout: 30 }, [
        ['say'],
        ['out2'],
        ['out3'],
        ['out4'],
      ]),
      ...chain('pOut', [
        ['output-task', 'say', { text: 'Hello {name}, your appointment is {when}.' }],
        ['input-task', 'ask', { prompt: 'Press 1 to confirm, 2 to reschedule.', resultVariable: 'answer' }],
        ['output-task', 'thanks', { text: 'You pressed {answer}. Calling {call.from} from {call.to}.' }],
        ['end-task', 'end'],
      ]),
      ...chain('pOut', [
        ['output-task', 'mail', { text: 'This is a message for {name}.' }],
        ['end-task', 'mailEnd'],
      ]),
      reporter('pOut', 'out2', 'OUT2'),
      reporter('pOut', 'out3', 'OUT3'),
      ...requestEntry('pOut', 'r2', '/call-amd', 'coAmd'),
      node('telco-call-out', 'coAmd', 'pOut', { environment: 'vout', to: 'to', toType: 'msg', machineDetection: 'DetectMessageEnd', ringTimeout: 20 }, [
        ['say'],
        ['out2'],
        ['out3'],
        ['mail'],
      ]),
      ...requestEntry('pOut', 'r3', '/call-nocaller', 'coNoCaller'),
      node('telco-call-out', 'coNoCaller', 'pOut', { environment: 'vnocaller', to: 'to', toType: 'msg' }, [[], ['out2']]),
      ...requestEntry('pOut', 'r4', '/call-nocreds', 'coNoCreds'),
      node('telco-call-out', 'coNoCreds', 'pOut', { environment: 'vnocreds', to: 'to', toType: 'msg' }, [[], ['out2']]),
      ...requestEntry('pOut', 'r6', '/call-keysid', 'coKeySid'),
      node('telco-call-out', 'coKeySid', 'pOut', { environment: 'vsk', to: 'to', toType: 'msg' }, [[], ['out2']]),
      ...requestEntry('pOut', 'r7', '/call-noscheme', 'coNoScheme'),
      node('telco-call-out', 'coNoScheme', 'pOut', { environment: 'vnoscheme', to: 'to', toType: 'msg' }, [[], ['out2']]),
      // A fan-out: one request, one message per number out of a Function node, all with its _msgid.
      node('http in', 'fanIn', 'pOut', { url: '/call-fan', method: 'post', upload: false }, [['fanFn', 'fanOk']]),
      node('http response', 'fanOk', 'pOut', { statusCode: '200' }),
      node('function', 'fanFn', 'pOut', { func: 'return [msg.payload.to.map((to) => ({ to, vars: {} }))];', outputs: 1 }, [['co']]),
      ...requestEntry('pOut', 'r5', '/call-fixed', 'coFixed'),
      node('telco-call-out', 'coFixed', 'pOut', { environment: 'vout', to: '{phone}', toType: 'str', ringTimeout: 5 }, [[], ['out2']]),
      tab('pIn', 'Incoming'),
      ...chain('pIn', [
        ['telco-call-start', 'cin', { environment: 'vout' }],
        ['input-task', 'inAsk', { prompt: 'Your account number?', resultVariable: 'account' }],
        ['end-task', 'inEnd'],
      ]),
      tab('pMax', 'One Session at most'),
      ...chain('pMax', [
        ['telco-call-start', 'cinMax', { environment: 'vmax' }],
        ['input-task', 'maxAsk', { prompt: 'Your account number?', resultVariable: 'account' }],
        ['end-task', 'maxEnd'],
      ]),
      ...requestEntry('pMax', 'r8', '/call-max', 'coMax'),
      node('telco-call-out', 'coMax', 'pMax', { environment: 'vmax', to: 'to', toType: 'msg' }, [['maxAsk'], ['out2Max']]),
      reporter('pMax', 'out2Max', 'OUT2'),
      // Output 4 not wired: a machine's answer still starts the Session there.
      node('function', 'out4', 'pOut', { func: 'node.warn("OUT4 " + JSON.stringify({ vars: msg.vars })); return null;', outputs: 0 }),
    ]);
  });
  after(async function () {
    await red?.close();
    await api?.close();
  });
  beforeEach(function () {
    api.callsMode = 'ok';
  });

  it('records the request, places it with the Environment, and a person answering runs output 1 with {call}; later rounds work as on an incoming call', async function () {
    const to = '+14155550123';
    await requestCall(red, '/call-plain', { to, vars: { name: 'Ada', when: 'Tuesday at 10' } });
    const call = await placed(to);
    should(call.form).have.properties({ To: to, From: CALLER_ID, Method: 'POST', StatusCallbackMethod: 'POST', Timeout: '30' });
    // Both URLs name the request that placed the call (the seq of its queue item).
    const request = /\?callOut=(\d+)$/.exec(call.form.Url)?.[1];
    should(request).be.ok();
    should(call.form.Url).equal(red.url(`/api/TelcoModule/Voice/start/${env.token}?callOut=${request}`));
    should(call.form.StatusCallback).equal(red.url(`/api/TelcoModule/Voice/status/vout?callOut=${request}`));
    should(call.form).not.have.property('MachineDetection');
    should(api.requests.find((r) => r.path.endsWith('/Calls.json'))).have.properties({
      username: 'AC' + '1'.repeat(32),
      password: AUTH_TOKEN,
    });
    should((await api.status(call, 'ringing')).status).equal(200);

    const first = await api.answer(call);
    should(first.status).equal(200, first.text);
    should(first.verbs.map((v) => v.verb)).eql(['Say', 'Gather']);
    should(first.verbs[0].text).equal('Hello Ada, your appointment is Tuesday at 10.');
    const second = await api.signedPost(first.verbs[1].attrs.action, { ...api.callParams(call), CallStatus: 'in-progress', Digits: '1' });
    should(second.verbs.map((v) => [v.verb, v.text])).eql([
      ['Say', `You pressed 1. Calling ${to} from ${CALLER_ID}.`],
      ['Hangup', ''],
    ]);
    const session = await sessionOfCall(red, call.sid);
    should(session.state).equal('completed');
    should(session.vars.call).have.properties({
      from: to,
      to: CALLER_ID,
      callId: call.sid,
      direction: 'outbound-api',
      answeredBy: '',
      channel: 'TelcoVoice',
      isTest: false,
    });
    should(session.vars.name).equal('Ada');
  });

  for (const status of ['busy', 'no-answer', 'failed', 'canceled']) {
    it(`a call that ends ${status} leaves on output 3 with msg.call.status and no Session`, async function () {
      const to = `+1415555${String(['busy', 'no-answer', 'failed', 'canceled'].indexOf(status)).padStart(2, '0')}31`;
      const mark = red.logs.length;
      await requestCall(red, '/call-plain', { to, vars: { name: 'Bo' }, topic: `reminder ${status}` });
      const call = await placed(to);
      should((await api.status(call, 'initiated')).status).equal(200);
      should((await api.status(call, status)).status).equal(200);
      const out = await reportedOnce(red, 'OUT3', mark);
      should(out.call).have.properties({ status, callId: call.sid, to, from: CALLER_ID });
      should(out.topic).equal(`reminder ${status}`);
      should(out.vars).eql({ name: 'Bo' });
      should(out.session).be.undefined();
      // Twilio retries a status callback it got no answer for: a second copy does nothing.
      should((await api.status(call, status)).status).equal(200);
      await new Promise((r) => setTimeout(r, 300));
      should(reported(red, 'OUT3', mark)).have.length(1);
      should(await eventually(async () => (await sessionOfCall(red, call.sid))?.state === 'ended' || undefined)).be.true();
    });
  }

  it('a busy status posted before the create answered still reaches the Call out node: output 3', async function () {
    const to = '+14155550441';
    const mark = red.logs.length;
    api.callsMode = 'held';
    await requestCall(red, '/call-plain', { to, vars: { name: 'Ida' } });
    const call = await placed(to);
    const statusPosted = api.status(call, 'busy');
    await new Promise((r) => setTimeout(r, 300));
    api.releaseHeld();
    should((await statusPosted).status).equal(200);
    const out = await reportedOnce(red, 'OUT3', mark);
    should(out.call).have.properties({ status: 'busy', callId: call.sid, to });
  });

  it('machine detection DetectMessageEnd: a machine runs output 4 after its greeting, a person output 1', async function () {
    const machine = '+14155550141';
    await requestCall(red, '/call-amd', { to: machine, vars: { name: 'Cy' } });
    const call = await placed(machine);
    should(call.form).have.properties({ MachineDetection: 'DetectMessageEnd', Timeout: '20' });
    const mail = await api.answer(call, { AnsweredBy: 'machine_end_beep' });
    should(mail.verbs.map((v) => [v.verb, v.text])).eql([
      ['Say', 'This is a message for Cy.'],
      ['Hangup', ''],
    ]);
    should((await sessionOfCall(red, call.sid)).vars.call).have.properties({ answeredBy: 'machine_end_beep', direction: 'outbound-api' });

    const person = '+14155550142';
    await requestCall(red, '/call-amd', { to: person, vars: { name: 'Di', when: 'now' } });
    const human = await placed(person);
    const answer = await api.answer(human, { AnsweredBy: 'human' });
    should(answer.verbs.map((v) => v.verb)).eql(['Say', 'Gather']);
    should((await sessionOfCall(red, human.sid)).vars.call.answeredBy).equal('human');
    await api.status(human, 'completed');
    await eventually(async () => (await sessionOfCall(red, human.sid))?.state === 'ended' || undefined, 5000, 'the Session to end with the call');
  });

  it("an answer posted before the create answered is still the call out's: it waits for the call to be recorded, then runs its output", async function () {
    const to = '+14155550143';
    api.callsMode = 'held';
    await requestCall(red, '/call-amd', { to, vars: { name: 'Hal' } });
    const call = await placed(to);
    // The person's voicemail picks up while the create's answer is still on its way to Node-RED.
    const answering = api.answer(call, { AnsweredBy: 'machine_end_beep' });
    await new Promise((r) => setTimeout(r, 300));
    should(await sessionOfCall(red, call.sid)).be.undefined();
    api.releaseHeld();
    const mail = await answering;
    should(mail.verbs.map((v) => [v.verb, v.text])).eql([
      ['Say', 'This is a message for Hal.'],
      ['Hangup', ''],
    ]);
    should((await sessionOfCall(red, call.sid)).vars.call).have.properties({ answeredBy: 'machine_end_beep', direction: 'outbound-api' });
  });

  it('fax counts as a machine; unknown as a person', async function () {
    const fax = '+14155550151';
    const mark = red.logs.length;
    await requestCall(red, '/call-amd', { to: fax, vars: { name: 'Ed' } });
    const call = await placed(fax);
    should((await api.answer(call, { AnsweredBy: 'fax' })).verbs[0].text).equal('This is a message for Ed.');
    const unknown = '+14155550152';
    await requestCall(red, '/call-amd', { to: unknown, vars: { name: 'Flo', when: 'soon' } });
    const second = await placed(unknown);
    should((await api.answer(second, { AnsweredBy: 'unknown' })).verbs[0].text).equal('Hello Flo, your appointment is soon.');
    should(reported(red, 'OUT2', mark)).eql([]);
  });

  it('4030: a second request for a person with a live call Session takes output 2, names the Session, and sends nothing', async function () {
    const to = '+14155550161';
    const mark = red.logs.length;
    await requestCall(red, '/call-plain', { to, vars: { name: 'Gus' } });
    const call = await placed(to);
    const ringing = await eventually(async () => sessionOfCall(red, call.sid), 5000, 'the ringing call Session');
    should(ringing.waitingAt?.nodeId ?? ringing.waitingAt).be.ok();
    await requestCall(red, '/call-plain', { to, vars: { name: 'Gus again' } });
    const out = await reportedOnce(red, 'OUT2', mark);
    should(out.error).have.properties({ code: 4030, name: 'ConversationBusy' });
    should(out.error.message).containEql(ringing.id);
    await new Promise((r) => setTimeout(r, 300));
    should(callsTo(to)).have.length(1);

    // Answered, the call is still that person's live Session.
    await api.answer(call);
    const mark2 = red.logs.length;
    await requestCall(red, '/call-plain', { to, vars: {} });
    should((await reportedOnce(red, 'OUT2', mark2)).error.code).equal(4030);
    should(callsTo(to)).have.length(1);
    await api.status(call, 'completed');
  });

  it('a fan-out (one input message, one message per number, the same _msgid) calls each number; the same number twice is called once', async function () {
    const [ana, ben] = ['+14155550261', '+14155550262'];
    const mark = red.logs.length;
    await requestCall(red, '/call-fan', { to: [ana, ben] });
    await placed(ana);
    await placed(ben);
    await new Promise((r) => setTimeout(r, 300));
    should(callsTo(ana)).have.length(1);
    should(callsTo(ben)).have.length(1);
    should(reported(red, 'OUT2', mark)).eql([]);

    const cy = '+14155550263';
    await requestCall(red, '/call-fan', { to: [cy, cy] });
    const out = await reportedOnce(red, 'OUT2', mark);
    should(out.error.code).equal(4030);
    should(out.error.message).match(/^This message \(\w+\) already asked for a call to \+14155550263; it is not placed twice$/);
    await placed(cy);
    await new Promise((r) => setTimeout(r, 300));
    should(callsTo(cy)).have.length(1);
    should(reported(red, 'OUT2', mark)).have.length(1);
  });

  it('a person who called in has a live Session too: 4030', async function () {
    const to = '+14155550171';
    const inbound = await api.signedPost(red.url(`/api/TelcoModule/Voice/start/${env.token}`), {
      AccountSid: 'AC' + '1'.repeat(32),
      CallSid: 'CA' + 'f'.repeat(32),
      From: to,
      To: CALLER_ID,
      Direction: 'inbound',
      CallStatus: 'ringing',
    });
    should(inbound.status).equal(200);
    const mark = red.logs.length;
    await requestCall(red, '/call-plain', { to, vars: {} });
    should((await reportedOnce(red, 'OUT2', mark)).error.code).equal(4030);
    should(callsTo(to)).have.length(0);
  });

  it("the Environment's maxSessions reached: output 2 with 4001 before anything is sent, nobody rung", async function () {
    const inbound = await api.signedPost(red.url(`/api/TelcoModule/Voice/start/${limited.token}`), {
      AccountSid: 'AC' + '1'.repeat(32),
      CallSid: 'CA' + 'e'.repeat(32),
      From: '+14155550271',
      To: CALLER_ID,
      Direction: 'inbound',
      CallStatus: 'ringing',
    });
    should(inbound.status).equal(200, inbound.text);
    should((await sessionOfCall(red, 'CA' + 'e'.repeat(32))).state).equal('waiting');
    const to = '+14155550272';
    const mark = red.logs.length;
    await requestCall(red, '/call-max', { to, vars: {} });
    const out = await reportedOnce(red, 'OUT2', mark);
    should(out.error.code).equal(4001);
    should(out.error.message).equal('Environment "Voice vmax" has reached its limit of 1 live Sessions (maxSessions); the Session did not start');
    await new Promise((r) => setTimeout(r, 500));
    should(createPosts().filter((r) => r.form.To === to)).have.length(0);
  });

  it('the provider answers 5xx: one POST, never retried; output 2 with 4001 and "uncertain"', async function () {
    api.callsMode = 'error500';
    const before = createPosts().length;
    const mark = red.logs.length;
    await requestCall(red, '/call-plain', { to: '+14155550181', vars: {} });
    const out = await reportedOnce(red, 'OUT2', mark);
    should(out.error.code).equal(4001);
    should(out.error.message).match(/^uncertain: /);
    await new Promise((r) => setTimeout(r, 1000));
    should(createPosts().length - before).equal(1);
  });

  it('the provider does not answer in time: one POST ever; output 2 with 4001 and "uncertain"', async function () {
    api.callsMode = 'hang';
    const before = createPosts().length;
    const mark = red.logs.length;
    await requestCall(red, '/call-plain', { to: '+14155550182', vars: {} });
    const out = await reportedOnce(red, 'OUT2', mark);
    should(out.error.code).equal(4001);
    should(out.error.message).match(/^uncertain: Twilio did not answer within 1 s for the call to \+14155550182/);
    await new Promise((r) => setTimeout(r, 1500));
    should(createPosts().length - before).equal(1);
  });

  it('the connection is lost once the create was sent: one POST, never retried; output 2 with 4001 and "uncertain"', async function () {
    api.callsMode = 'reset';
    const to = '+14155550186';
    const before = createPosts().length;
    const mark = red.logs.length;
    await requestCall(red, '/call-plain', { to, vars: {} });
    const out = await reportedOnce(red, 'OUT2', mark);
    should(out.error.code).equal(4001);
    should(out.error.message).equal(
      `uncertain: the connection to Twilio failed after the call to ${to} may have been sent: the connection was reset before Twilio answered (ECONNRESET); it was not sent again, as Twilio may have taken it`,
    );
    await new Promise((r) => setTimeout(r, 1500));
    should(createPosts().length - before).equal(1);
  });

  it('a call reported uncertain that the provider placed after all: its answer is hung up, not started at the Call start', async function () {
    const to = '+14155550184';
    api.callsMode = 'placedUnanswered';
    const mark = red.logs.length;
    await requestCall(red, '/call-plain', { to, vars: { name: 'Ida' } });
    const out = await reportedOnce(red, 'OUT2', mark);
    should(out.error.message).match(/^uncertain: /);
    const call = await placed(to);
    const answered = await api.answer(call);
    should(answered.status).equal(200, answered.text);
    should(answered.verbs.map((v) => v.verb)).eql(['Hangup']);
    should(await sessionOfCall(red, call.sid)).be.undefined();
    const warning = red.logs.slice(mark).find((l) => l.includes(`voice call ${call.sid}`));
    should(warning).match(/a Call out placed this call, but no Session waits for its answer .*; hung up$/);
    // Its status callbacks find nothing to act on either.
    should((await api.status(call, 'completed')).status).equal(200);
    should(await sessionOfCall(red, call.sid)).be.undefined();
    should(createPosts().filter((r) => r.form.To === to)).have.length(1);
  });

  it('the provider refuses the call: output 2 with 4001 and its reason (not uncertain)', async function () {
    api.callsMode = 'reject400';
    const mark = red.logs.length;
    await requestCall(red, '/call-plain', { to: '+14155550183', vars: {} });
    const out = await reportedOnce(red, 'OUT2', mark);
    should(out.error.code).equal(4001);
    should(out.error.message).equal('Twilio rejected the call to +14155550183: Account not authorized to call this number (Twilio error 21215, HTTP 400)');
  });

  it("a refusal quoting the call's Url says what Twilio said without the Environment's token", async function () {
    api.callsMode = 'rejectUrl';
    const mark = red.logs.length;
    await requestCall(red, '/call-plain', { to: '+14155550185', vars: {} });
    const out = await reportedOnce(red, 'OUT2', mark);
    should(out.error.code).equal(4001);
    should(out.error.message).startWith('Twilio rejected the call to +14155550185: Url is not a valid URL: ');
    should(out.error.message).containEql('(Twilio error 21205, HTTP 400)');
    should(out.error.message).containEql(`/api/TelcoModule/Voice/start/${env.token.slice(0, 4)}…?callOut=`);
    should(out.error.message).not.containEql(env.token);
    should(red.logs.slice(mark).filter((l) => l.includes(env.token))).eql([]);
  });

  describe('bad input takes output 2 before anything is sent', function () {
    const cases: Array<[string, string, Record<string, unknown>, number, RegExp]> = [
      ['no number', '/call-plain', { vars: {} }, 3005, /^To is empty/],
      ['a number that is not E.164', '/call-plain', { to: '0155 1234', vars: {} }, 3005, /^To "0155 1234" is not a phone number in E\.164 form/],
      ['a whatsapp: address', '/call-plain', { to: 'whatsapp:+14155550123', vars: {} }, 3005, /is not a phone number in E\.164 form/],
      ['msg.vars that is not an object', '/call-plain', { to: '+14155550191', vars: 'Ada' }, 3005, /^msg\.vars must be an object/],
      [
        'no Caller ID on the Environment',
        '/call-nocaller',
        { to: '+14155550192', vars: {} },
        3005,
        /^Caller ID not set in voice Environment "Voice vnocaller"/,
      ],
      [
        'no Auth Token on the Environment',
        '/call-nocreds',
        { to: '+14155550193', vars: {} },
        4008,
        /^Auth Token not set in voice Environment "Voice vnocreds"/,
      ],
      [
        'an API key SID (SK…) as the Account SID',
        '/call-keysid',
        { to: '+14155550195', vars: {} },
        4008,
        /^The Account SID of the voice Environment "Voice vsk" must begin with AC, not "SK"; an API key SID \(SK…\) is not an Account SID$/,
      ],
      [
        'an API URL without its scheme',
        '/call-noscheme',
        { to: '+14155550196', vars: {} },
        4008,
        /^The API URL "localhost:3000" of the voice Environment "Voice vnoscheme" is not a URL with http:\/\/ or https:\/\/ and a host/,
      ],
      ['a placeholder that resolves to nothing', '/call-fixed', { vars: { name: 'x' } }, 3005, /^To is empty/],
    ];
    for (const [what, path, body, code, message] of cases) {
      it(what, async function () {
        const before = createPosts().length;
        const mark = red.logs.length;
        await requestCall(red, path, body);
        const out = await reportedOnce(red, 'OUT2', mark);
        should(out.error.code).equal(code);
        should(out.error.message).match(message);
        await new Promise((r) => setTimeout(r, 200));
        should(createPosts().length).equal(before);
      });
    }

    it("a To placeholder resolved from msg.vars, with the node's ring timeout", async function () {
      await requestCall(red, '/call-fixed', { vars: { phone: '+14155550194' } });
      should((await placed('+14155550194')).form.Timeout).equal('5');
    });
  });

  it('a status callback with a bad signature is refused (403) and does nothing', async function () {
    const to = '+14155550195';
    const mark = red.logs.length;
    await requestCall(red, '/call-plain', { to, vars: {} });
    const call = await placed(to);
    const forged = await api.signedPost(call.form.StatusCallback, { ...api.callParams(call), CallStatus: 'busy' }, 'not-the-auth-token');
    should(forged.status).equal(403);
    await new Promise((r) => setTimeout(r, 300));
    should(reported(red, 'OUT3', mark)).eql([]);
    await api.status(call, 'no-answer');
    should((await reportedOnce(red, 'OUT3', mark)).call.status).equal('no-answer');
  });
});
