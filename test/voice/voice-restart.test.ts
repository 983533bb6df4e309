import should from 'should';
import { NodeRed } from '../harness/node-red';
import { chain, tab } from '../harness/flows';
import { FakeTwilioCall } from '../fakes/twilio-voice-caller';
import { sessionOfCall, voiceEnvironment } from '../harness/voice-flows';

/** A call waiting for the caller's answer survives a Node-RED restart with a persistent Session store. */
describe('voice: a waiting call across a restart', function () {
  let red: NodeRed;
  const env = voiceEnvironment('vkeep', { sessionStore: 'file' });

  before(async function () {
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

  it('continues the Session by CallSid after the restart and answers the next TwiML', async function () {
    const call = new FakeTwilioCall(red, { from: '+14155550123' });
    const first = await call.start(env.token);
    should(first.verbs.map((v) => v.verb)).eql(['Gather']);
    await red.restart();
    await red.waitForLog(/1 waiting Sessions restored/);
    const next = await call.follow(first.verbs[0].attrs.action, { Digits: '4711' });
    should(next.status).equal(200, next.text);
    should(next.verbs.map((v) => [v.verb, v.text])).eql([
      ['Say', 'Thanks, 4711 from +14155550123.'],
      ['Hangup', ''],
    ]);
    should((await sessionOfCall(red, call.callSid)).state).equal('completed');
  });
});
