import assert from 'node:assert/strict';
import { createServer, type Server, type ServerResponse } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { NodeRed, eventually } from './harness/node-red';
import { chain, node, tab } from './harness/flows';
import { FakeTwilioCall, type CallAnswer, type ParsedVerb } from './fakes/twilio-voice-caller';
import { sessionOfCall, voiceEnvironment } from './voice-flows';

/** A step the test holds open: the flow's `http request` waits until the test releases it. */
class Hold {
  calls = 0;
  private waiting: ServerResponse[] = [];
  private server: Server | undefined;
  port = 0;

  async start(): Promise<void> {
    this.server = createServer((_req, res) => {
      this.calls += 1;
      this.waiting.push(res);
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as { port: number }).port;
  }

  release(): void {
    for (const res of this.waiting.splice(0)) res.end('done');
  }

  async close(): Promise<void> {
    this.release();
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }
}

/**
 * Slow flows and calls that end: a short voiceResponseTimeout and TelcoVoice idle expiry. The
 * expiry is long enough that the slow-flow test (whose Session waits at the end) is never cut off.
 */
describe('voice: slow flows keep the call, abandoned calls do not keep Sessions', () => {
  let red: NodeRed;
  const hold = new Hold();
  const slow = voiceEnvironment('vslow');
  const idle = voiceEnvironment('vidle');

  before(async () => {
    await hold.start();
    red = await NodeRed.start({
      settings: { channelSessions: { voiceResponseTimeout: 0.3, idleTimeout: { TelcoVoice: 4 }, sweepInterval: 0.1 } },
    });
    await red.deploy([
      slow, idle,
      tab('pSlow', 'Slow'),
      node('telco-call-start', 'ss', 'pSlow', { environment: 'vslow' }, [['hello']]),
      node('output-task', 'hello', 'pSlow', { text: 'Please hold.' }, [['wait'], []]),
      node('http request', 'wait', 'pSlow', { method: 'GET', ret: 'txt', url: `http://127.0.0.1:${hold.port}/slow`, paytoqs: 'ignore' }, [['thanks']]),
      node('output-task', 'thanks', 'pSlow', { text: 'Thanks for holding.' }, [['ask'], []]),
      node('input-task', 'ask', 'pSlow', { prompt: 'Anything else?', resultVariable: 'more' }, [['bye'], []]),
      node('output-task', 'bye', 'pSlow', { text: 'Goodbye, {more}.' }, [['end'], []]),
      node('end-task', 'end', 'pSlow', {}),
      tab('pIdle', 'Idle'),
      ...chain('pIdle', [['telco-call-start', 'is', { environment: 'vidle' }], ['input-task', 'iask', { prompt: 'Hello?', resultVariable: 'x' }], ['end-task', 'iend']]),
    ]);
  });
  after(async () => {
    await red?.close();
    await hold.close();
  });

  const isHolding = (v: ParsedVerb) => v.verb === 'Pause' || v.verb === 'Redirect';

  it('answers the verbs so far with a Pause and a Redirect when the flow is slow; the redirect waits for the flow and answers the rest, nothing lost or repeated', async () => {
    const call = new FakeTwilioCall(red);
    const first = await call.start(slow.token);
    assert.equal(first.status, 200);
    assert.deepEqual(first.verbs.slice(-2).map((v) => [v.verb, v.attrs]), [
      ['Pause', { length: '1' }],
      ['Redirect', { method: 'POST' }],
    ]);
    assert.equal(first.verbs.at(-1)!.text, '/api/TelcoModule/Voice/next/vslow?pending=1');
    await eventually(() => hold.calls === 1, 3000, 'the flow to reach the slow step');
    assert.equal((await sessionOfCall(red, call.callSid)).state, 'running', 'the flow is still running');

    const held = await call.follow(first.verbs.at(-1)!.text);
    assert.deepEqual(held.verbs.map((v) => v.verb), ['Pause', 'Redirect'], 'still held: nothing new, nothing repeated');
    hold.release();
    // Follow redirects as Twilio would until an answer without one (more come only if the machine is slow).
    const answers: CallAnswer[] = [first, held];
    while (answers.at(-1)!.verbs.at(-1)?.verb === 'Redirect') answers.push(await call.follow(answers.at(-1)!.verbs.at(-1)!.text));
    const said = answers.flatMap((a) => a.verbs.filter((v) => !isHolding(v))).map((v) => [v.verb, v.text]);
    assert.deepEqual(said, [['Say', 'Please hold.'], ['Say', 'Thanks for holding.'], ['Gather', 'Anything else?']]);
    assert.equal(hold.calls, 1, 'the slow step ran once');

    const session = await sessionOfCall(red, call.callSid);
    assert.equal(session.waitingAt.nodeId, 'ask', 'the redirect did not count as an answer');
    assert.equal(session.vars.more, undefined);
    const last = await call.follow(answers.at(-1)!.verbs.at(-1)!.attrs.action, { SpeechResult: 'no thanks' });
    assert.deepEqual(last.verbs.map((v) => [v.verb, v.text]), [['Say', 'Goodbye, no thanks.'], ['Hangup', '']]);
  });

  it('ends a voice Session left waiting by a call nobody finishes at the TelcoVoice idle expiry', async () => {
    const call = new FakeTwilioCall(red);
    const answer = await call.start(idle.token);
    assert.equal(answer.verbs[0].verb, 'Gather');
    const ended = await eventually(async () => {
      const s = await sessionOfCall(red, call.callSid);
      return s?.state === 'ended' ? s : undefined;
    }, 10000, 'the idle expiry');
    assert.match(ended.endReason, /expired after 4 s/);
  });
});
