import should from 'should';
import { Hold } from '../harness/hold';
import { NodeRed, eventually } from '../harness/node-red';
import { chain, node, tab } from '../harness/flows';
import { FakeTwilioCall, type CallAnswer, type ParsedVerb } from '../fakes/twilio-voice-caller';
import { sessionOfCall, voiceEnvironment } from '../harness/voice-flows';

/**
 * Slow flows and calls that end: a short voiceResponseTimeout and TelcoVoice idle expiry. The
 * expiry is long enough that the slow-flow test (whose Session waits at the end) is never cut off.
 */
describe('voice: slow flows keep the call, abandoned calls do not keep Sessions', function () {
  let red: NodeRed;
  const hold = new Hold();
  const slow = voiceEnvironment('vslow');
  const idle = voiceEnvironment('vidle');

  before(async function () {
    await hold.start();
    red = await NodeRed.start({
      settings: { channelSessions: { voiceResponseTimeout: 0.3, idleTimeout: { TelcoVoice: 4 }, sweepInterval: 0.1 } },
    });
    await red.deploy([
      slow,
      idle,
      tab('pSlow', 'Slow'),
      node('telco-call-start', 'ss', 'pSlow', { environment: 'vslow' }, [['hello']]),
      node('output-task', 'hello', 'pSlow', { text: 'Please hold.' }, [['wait'], []]),
      node('http request', 'wait', 'pSlow', { method: 'GET', ret: 'txt', url: `http://127.0.0.1:${hold.port}/slow`, paytoqs: 'ignore' }, [['thanks']]),
      node('output-task', 'thanks', 'pSlow', { text: 'Thanks for holding.' }, [['ask'], []]),
      node('input-task', 'ask', 'pSlow', { prompt: 'Anything else?', resultVariable: 'more' }, [['bye'], []]),
      node('output-task', 'bye', 'pSlow', { text: 'Goodbye, {more}.' }, [['end'], []]),
      node('end-task', 'end', 'pSlow', {}),
      tab('pIdle', 'Idle'),
      ...chain('pIdle', [
        ['telco-call-start', 'is', { environment: 'vidle' }],
        ['input-task', 'iask', { prompt: 'Hello?', resultVariable: 'x' }],
        ['end-task', 'iend'],
      ]),
    ]);
  });
  after(async function () {
    await red?.close();
    await hold.close();
  });

  const isHolding = (v: ParsedVerb) => v.verb === 'Pause' || v.verb === 'Redirect';

  it('answers the verbs so far with a Pause and a Redirect when the flow is slow; the redirect waits for the flow and answers the rest, nothing lost or repeated', async function () {
    const call = new FakeTwilioCall(red);
    const first = await call.start(slow.token);
    should(first.status).equal(200);
    should(first.verbs.slice(-2).map((v) => [v.verb, v.attrs])).eql([
      ['Pause', { length: '1' }],
      ['Redirect', { method: 'POST' }],
    ]);
    should(first.verbs.at(-1)!.text).equal('/api/TelcoModule/Voice/next/vslow?pending=1');
    await eventually(() => hold.calls === 1, 3000, 'the flow to reach the slow step');
    should((await sessionOfCall(red, call.callSid)).state).equal('running', 'the flow is still running');

    const held = await call.follow(first.verbs.at(-1)!.text);
    should(held.verbs.map((v) => v.verb)).eql(['Pause', 'Redirect'], 'still held: nothing new, nothing repeated');
    hold.release();
    // Follow redirects as Twilio would until an answer without one (more come only if the machine is slow).
    const answers: CallAnswer[] = [first, held];
    while (answers.at(-1)!.verbs.at(-1)?.verb === 'Redirect') answers.push(await call.follow(answers.at(-1)!.verbs.at(-1)!.text));
    const said = answers.flatMap((a) => a.verbs.filter((v) => !isHolding(v))).map((v) => [v.verb, v.text]);
    should(said).eql([
      ['Say', 'Please hold.'],
      ['Say', 'Thanks for holding.'],
      ['Gather', 'Anything else?'],
    ]);
    should(hold.calls).equal(1, 'the slow step ran once');

    const session = await sessionOfCall(red, call.callSid);
    should(session.waitingAt.nodeId).equal('ask', 'the redirect did not count as an answer');
    should(session.vars.more).equal(undefined);
    const last = await call.follow(answers.at(-1)!.verbs.at(-1)!.attrs.action, { SpeechResult: 'no thanks' });
    should(last.verbs.map((v) => [v.verb, v.text])).eql([
      ['Say', 'Goodbye, no thanks.'],
      ['Hangup', ''],
    ]);
  });

  it('ends a voice Session left waiting by a call nobody finishes at the TelcoVoice idle expiry', async function () {
    const call = new FakeTwilioCall(red);
    const answer = await call.start(idle.token);
    should(answer.verbs[0].verb).equal('Gather');
    const ended = await eventually(
      async () => {
        const s = await sessionOfCall(red, call.callSid);
        return s?.state === 'ended' ? s : undefined;
      },
      10000,
      'the idle expiry',
    );
    should(ended.endReason).match(/expired after 4 s/);
  });
});
