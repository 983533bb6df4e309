import should from 'should';
import { eventually, NodeRed } from '../harness/node-red';
import { chain, node, tab } from '../harness/flows';
import { FakeTwilioApi, type CreatedCall } from '../fakes/twilio-api';
import { reported, reportedOnce, reporter, requestCall, requestEntry } from '../harness/call-out-flows';
import { sessionOfCall, voiceEnvironment } from '../harness/voice-flows';

const CALLER_ID = '+14155550100';

/** Call out's queue in the durable store: paced, in order, and across a crash of Node-RED. */
describe('voice: Call out paced and across a crash', function () {
  this.timeout(90000);
  let red: NodeRed;
  let api: FakeTwilioApi;
  let slow: ReturnType<typeof voiceEnvironment>;

  const callsTo = (to: string): CreatedCall[] => api.calls.filter((c) => c.form.To === to);
  const createPosts = () => api.requests.filter((r) => r.path.endsWith('/Calls.json'));

  before(async function () {
    api = await FakeTwilioApi.start();
    red = await NodeRed.start();
    const base = red.url('').replace(/\/$/, '');
    slow = voiceEnvironment('vslow', { publicBaseUrl: base, apiUrl: api.url, callerId: CALLER_ID, callsPerSecond: 0.5 });
    await red.deploy([
      voiceEnvironment('vpace', { publicBaseUrl: base, apiUrl: api.url, callerId: CALLER_ID, callsPerSecond: 4 }),
      slow,
      voiceEnvironment('vslowmax', { publicBaseUrl: base, apiUrl: api.url, callerId: CALLER_ID, callsPerSecond: 0.5, maxSessions: 1 }),
      tab('pq', 'Queue'),
      ...requestEntry('pq', 'rp', '/call-paced', 'coPaced'),
      node('telco-call-out', 'coPaced', 'pq', { environment: 'vpace', to: 'to', toType: 'msg' }, [[], ['err']]),
      ...requestEntry('pq', 'rs', '/call-slow', 'coSlow'),
      node('telco-call-out', 'coSlow', 'pq', { environment: 'vslow', to: 'to', toType: 'msg' }, [[], ['err']]),
      ...requestEntry('pq', 'rm', '/call-slow-max', 'coSlowMax'),
      node('telco-call-out', 'coSlowMax', 'pq', { environment: 'vslowmax', to: 'to', toType: 'msg' }, [[], ['err']]),
      reporter('pq', 'err', 'OUT2'),
      tab('pin', 'Incoming'),
      ...chain('pin', [
        ['telco-call-start', 'cin', { environment: 'vslow' }],
        ['input-task', 'inAsk', { prompt: 'Your account number?', resultVariable: 'account' }],
        ['end-task', 'inEnd'],
      ]),
    ]);
  });
  after(async function () {
    await red?.close();
    await api?.close();
  });
  beforeEach(function () {
    api.callsMode = 'ok';
  });

  it('places calls in the order asked, at most callsPerSecond (4): measured spread', async function () {
    // The first call of a runtime runs cold code on its way out (measured up to 160 ms late on a
    // loaded CI machine): one call first, so the gaps measured are the pace's, not that.
    await requestCall(red, '/call-paced', { to: '+14155550299', vars: {} });
    await eventually(() => callsTo('+14155550299')[0], 10000, 'the first call');
    await new Promise((r) => setTimeout(r, 300));
    const people = Array.from({ length: 8 }, (_, i) => `+1415555020${i}`);
    for (const to of people) await requestCall(red, '/call-paced', { to, vars: {} });
    const calls = await eventually(() => {
      const found = people.map((to) => callsTo(to)[0]);
      return found.every(Boolean) ? found : undefined;
    }, 15000);
    should(calls.map((c) => c.form.To)).eql(people);
    const gaps = calls.slice(1).map((c, i) => c.at - calls[i].at);
    // Slots 250 ms apart; each request reaches the fake a little after its slot (a busy machine
    // delays one more than the next), so single gaps vary while the spread holds.
    for (const gap of gaps) should(gap).be.aboveOrEqual(125, `gaps ${gaps.join(', ')}`);
    should(calls[7].at - calls[0].at).be.aboveOrEqual(7 * 250 - 250, `gaps ${gaps.join(', ')}`);
    should(calls[7].at - calls[0].at).be.below(7 * 250 + 1500);
  });

  it('4030 for a request queued behind another call to the same person: found when its turn comes, nothing sent', async function () {
    const to = '+14155550501';
    const mark = red.logs.length;
    // Both pass the look on arrival (no call yet); the second waits 2 s for its slot (0.5 calls per second).
    await Promise.all([requestCall(red, '/call-slow', { to, vars: {} }), requestCall(red, '/call-slow', { to, vars: {} })]);
    const out = await reportedOnce(red, 'OUT2', mark, 15000);
    should(out.error.code).equal(4030);
    should(out.error.message).startWith(`${to} already has a`);
    await new Promise((r) => setTimeout(r, 500));
    should(callsTo(to)).have.length(1);
  });

  it('4030 for a person who called in while the request waited for its slot: found in the store when its turn comes, nothing sent', async function () {
    const [other, caller] = ['+14155550521', '+14155550522'];
    await requestCall(red, '/call-slow', { to: other, vars: {} });
    await eventually(() => callsTo(other)[0], 10000, 'the first call');
    const mark = red.logs.length;
    // The request passes the look on arrival (no Session yet), then waits 2 s for its slot (0.5 calls per second).
    await requestCall(red, '/call-slow', { to: caller, vars: {} });
    await new Promise((r) => setTimeout(r, 300));
    should(reported(red, 'OUT2', mark)).eql([]);
    const callSid = 'CA' + 'd'.repeat(32);
    const inbound = await api.signedPost(red.url(`/api/TelcoModule/Voice/start/${slow.token}`), {
      AccountSid: 'AC' + '1'.repeat(32),
      CallSid: callSid,
      From: caller,
      To: CALLER_ID,
      Direction: 'inbound',
      CallStatus: 'ringing',
    });
    should(inbound.status).equal(200, inbound.text);
    const session = await sessionOfCall(red, callSid);
    should(session.state).equal('waiting');
    const out = await reportedOnce(red, 'OUT2', mark, 15000);
    should(out.error).have.properties({ code: 4030, name: 'ConversationBusy' });
    should(out.error.message).equal(`${caller} already has a live call Session ${session.id} on this Environment; no call was placed`);
    await new Promise((r) => setTimeout(r, 500));
    should(callsTo(caller)).have.length(0);
  });

  it('maxSessions reached while a request waits for its turn: output 2 with 4001 when the turn comes, nothing sent', async function () {
    const [first, second] = ['+14155550511', '+14155550512'];
    const mark = red.logs.length;
    // The first call's create is held, so its Session opens only once the second request is queued.
    api.callsMode = 'held';
    await requestCall(red, '/call-slow-max', { to: first, vars: {} });
    const call = await eventually(() => callsTo(first)[0], 10000, 'the first call');
    api.callsMode = 'ok';
    await requestCall(red, '/call-slow-max', { to: second, vars: {} });
    await new Promise((r) => setTimeout(r, 300));
    should(reported(red, 'OUT2', mark)).eql([]);
    api.releaseHeld();
    // The second waits 2 s for its slot (0.5 calls per second); the first call rings meanwhile.
    const out = await reportedOnce(red, 'OUT2', mark, 15000);
    should(out.error.code).equal(4001);
    should(out.error.message).equal('Environment "Voice vslowmax" has reached its limit of 1 live Sessions (maxSessions); the Session did not start');
    await new Promise((r) => setTimeout(r, 500));
    should(callsTo(second)).have.length(0);
    await api.status(call, 'no-answer');
  });

  it('a request recorded but not placed when Node-RED is killed (-9) is placed after the start, once', async function () {
    const first = '+14155550301';
    const second = '+14155550302';
    await requestCall(red, '/call-slow', { to: first, vars: {} });
    await eventually(() => callsTo(first)[0], 10000, 'the first call');
    // The second waits for its slot, 2 s after the first (0.5 calls per second).
    await requestCall(red, '/call-slow', { to: second, vars: {} });
    await new Promise((r) => setTimeout(r, 400));
    should(callsTo(second)).have.length(0);
    await red.kill();
    await red.relaunch();
    await eventually(() => callsTo(second)[0], 15000, 'the second call after the restart');
    await new Promise((r) => setTimeout(r, 2500));
    should(callsTo(second)).have.length(1);
    should(callsTo(first)).have.length(1);
  });

  it('Node-RED killed while the provider has the request: never placed again, output 2 with 4001 and "uncertain" after the start', async function () {
    const to = '+14155550401';
    api.callsMode = 'hang';
    const before = createPosts().length;
    const mark = red.logs.length;
    await requestCall(red, '/call-paced', { to, vars: {} });
    await eventually(() => createPosts().length > before || undefined, 10000, 'the create request');
    await red.kill();
    api.callsMode = 'ok';
    await red.relaunch();
    const out = await reportedOnce(red, 'OUT2', mark, 15000);
    should(out.error.code).equal(4001);
    should(out.error.message).equal(`uncertain: Node-RED stopped while placing the call to ${to}; the provider may have placed it, so it is not placed again`);
    await new Promise((r) => setTimeout(r, 1000));
    should(createPosts().length - before).equal(1);
    should(callsTo(to)).have.length(0);
    should(reported(red, 'OUT2', mark)).have.length(1);
  });
});
