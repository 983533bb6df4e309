import should from 'should';
import { NodeRed } from '../harness/node-red';
import { chain, tab } from '../harness/flows';
import { FakeTwilioCall } from '../fakes/twilio-voice-caller';
import { sessionOfCall, voiceEnvironment } from '../harness/voice-flows';

/** With the durable default store, a call waiting for the caller survives a crash and both kinds of graceful stop. */
describe('voice: a waiting call across a crash and graceful stops (durable default)', function () {
  this.timeout(60000);
  let red: NodeRed;
  const env = voiceEnvironment('vdur');

  before(async function () {
    red = await NodeRed.start();
    await red.deploy([
      env,
      tab('pDur', 'Account'),
      ...chain('pDur', [
        ['telco-call-start', 'ds', { environment: 'vdur' }],
        ['input-task', 'dask', { prompt: 'Your account number?', resultVariable: 'account' }],
        ['output-task', 'dout', { text: 'Thanks, {account} from {call.from}.' }],
        ['end-task', 'dend'],
      ]),
    ]);
  });
  after(async () => red?.close());

  const stops: Array<[string, (r: NodeRed) => Promise<void>]> = [
    ['SIGKILL', (r) => r.kill()],
    ['SIGINT', (r) => r.stop('SIGINT')],
    ['SIGTERM', (r) => r.stop('SIGTERM')],
  ];
  for (const [name, stop] of stops) {
    it(`continues the call after ${name} and answers the next TwiML`, async function () {
      const call = new FakeTwilioCall(red, { from: '+14155550199' });
      const first = await call.start(env.token);
      should(first.verbs.map((v) => v.verb)).eql(['Gather']);
      await stop(red);
      await red.relaunch();
      const next = await call.follow(first.verbs[0].attrs.action, { Digits: '4711' });
      should(next.status).equal(200, next.text);
      should(next.verbs.map((v) => [v.verb, v.text])).eql([
        ['Say', 'Thanks, 4711 from +14155550199.'],
        ['Hangup', ''],
      ]);
      should((await sessionOfCall(red, call.callSid)).state).equal('completed');
    });
  }
});
