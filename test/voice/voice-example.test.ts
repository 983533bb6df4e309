import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import should from 'should';
import { NodeRed, REPO_ROOT } from '../harness/node-red';
import { ACCOUNT_SID, AUTH_TOKEN, FakeTwilioCall } from '../fakes/twilio-voice-caller';
import { logsSince } from '../harness/voice-flows';

const example = (): any[] => JSON.parse(readFileSync(join(REPO_ROOT, 'examples', 'Phone IVR.json'), 'utf8'));

/** examples/Phone IVR.json deploys as is and runs in the test chat and on a call. */
describe('example flow: Phone IVR', function () {
  let red: NodeRed;
  before(async function () {
    red = await NodeRed.start();
  });
  after(async () => red?.close());

  async function chat(testData?: Record<string, unknown>) {
    const res = await red.admin('POST', '/channel-sessions/test-sessions', { start: 'ivr-start', testData });
    should(res.status).equal(201, res.text);
    return res.body;
  }
  async function say(id: string, text: string) {
    return (await red.admin('POST', `/channel-sessions/test-sessions/${id}/messages`, { text })).body;
  }
  const texts = (s: any) => s.transcript.map((l: any) => l.text);

  it('deploys as is without errors and transfers to support in the test chat', async function () {
    const mark = red.logs.length;
    await red.deploy(example());
    should(logsSince(red, mark).filter((l) => /\[error\]/.test(l))).eql([]);
    const started = await chat();
    should(texts(started)).eql([
      '[audio] https://api.twilio.com/cowbell.mp3',
      'Welcome to Example Corp.',
      'Say sales or support, or press 1 for sales, 2 for support, 3 to leave a voicemail.',
    ]);
    should(started.vars.call.from).equal('+15551234567');
    const done = await say(started.id, 'I need support please');
    should(done.state).equal('completed');
    should(texts(done)).containEql('[transferring the call to +14155550101]');
  });

  it('records a voicemail and asks again when it does not understand', async function () {
    await red.deploy(example());
    const started = await chat();
    const again = await say(started.id, 'pizza');
    should(again.state).equal('waiting');
    should(texts(again)).containEql('Sorry, I did not understand "pizza".');
    const recording = await say(started.id, '3');
    should(recording.waitingAt.nodeId).equal('ivr-record');
    const done = await say(started.id, 'Please call me back');
    should(done.state).equal('completed');
    should(done.vars.voicemail).equal('Please call me back');
    should(texts(done)).containEql('Thank you, your message was recorded. Goodbye.');
  });

  it('answers a real call once credentials are filled in: menu by digits, then the transfer', async function () {
    const flows = example();
    const env = flows.find((n) => n.type === 'telco-voice-environment');
    env.credentials = { accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN, token: 'example-token-0123456789abcdef' };
    await red.deploy(flows);
    const call = new FakeTwilioCall(red);
    const first = await call.start('example-token-0123456789abcdef');
    should(first.verbs.map((v) => v.verb)).eql(['Play', 'Say', 'Gather']);
    should(first.verbs[0].text).equal('https://api.twilio.com/cowbell.mp3');
    should(first.verbs[2].attrs.speechModel).equal('phone_call');
    const next = await call.follow(first.verbs[2].attrs.action, { Digits: '1' });
    should(next.verbs.map((v) => [v.verb, v.text])).eql([
      ['Say', 'Connecting you to sales.'],
      ['Dial', '+14155550100'],
      ['Hangup', ''],
    ]);
  });
});
