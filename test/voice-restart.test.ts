import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { NodeRed } from './harness/node-red';
import { chain, tab } from './harness/flows';
import { FakeTwilioCall } from './fakes/twilio-voice-caller';
import { sessionOfCall, voiceEnvironment } from './voice-flows';

/** A call waiting for the caller's answer survives a Node-RED restart with a persistent Session store. */
describe('voice: a waiting call across a restart', () => {
  let red: NodeRed;
  const env = voiceEnvironment('vkeep', { sessionStore: 'file' });

  before(async () => {
    red = await NodeRed.start({
      settings: { contextStorage: { default: { module: 'memory' }, file: { module: 'localfilesystem', config: { flushInterval: 1 } } } },
    });
    await red.deploy([
      env,
      tab('pKeep', 'Account'),
      ...chain('pKeep', [
        ['telco-call-start', 'ks', { environment: 'vkeep' }],
        ['input-task', 'kask', { prompt: 'Your account number?', resultVariable: 'account' }],
        ['output-task', 'kout', { text: 'Thanks, {account} from {call.from}.' }],
        ['end-task', 'kend'],
      ]),
    ]);
  });
  after(async () => red?.close());

  it('continues the Session by CallSid after the restart and answers the next TwiML', async () => {
    const call = new FakeTwilioCall(red, { from: '+14155550123' });
    const first = await call.start(env.token);
    assert.deepEqual(first.verbs.map((v) => v.verb), ['Gather']);
    await red.restart();
    await red.waitForLog(/1 waiting Sessions restored/);
    const next = await call.follow(first.verbs[0].attrs.action, { Digits: '4711' });
    assert.equal(next.status, 200, next.text);
    assert.deepEqual(next.verbs.map((v) => [v.verb, v.text]), [['Say', 'Thanks, 4711 from +14155550123.'], ['Hangup', '']]);
    assert.equal((await sessionOfCall(red, call.callSid)).state, 'completed');
  });
});
