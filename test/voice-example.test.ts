import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { NodeRed, REPO_ROOT } from './harness/node-red';
import { ACCOUNT_SID, AUTH_TOKEN, FakeTwilioCall } from './fakes/twilio-voice-caller';
import { logsSince } from './voice-flows';

const example = (): any[] => JSON.parse(readFileSync(join(REPO_ROOT, 'examples', 'Phone IVR.json'), 'utf8'));

/** examples/Phone IVR.json deploys as is and runs in the test chat and on a call. */
describe('example flow: Phone IVR', () => {
  let red: NodeRed;
  before(async () => {
    red = await NodeRed.start();
  });
  after(async () => red?.close());

  async function chat(testData?: Record<string, unknown>) {
    const res = await red.admin('POST', '/channel-sessions/test-sessions', { start: 'ivr-start', testData });
    assert.equal(res.status, 201, res.text);
    return res.body;
  }
  async function say(id: string, text: string) {
    return (await red.admin('POST', `/channel-sessions/test-sessions/${id}/messages`, { text })).body;
  }
  const texts = (s: any) => s.transcript.map((l: any) => l.text);

  it('deploys as is without errors and transfers to support in the test chat', async () => {
    const mark = red.logs.length;
    await red.deploy(example());
    assert.deepEqual(logsSince(red, mark).filter((l) => /\[error\]/.test(l)), []);
    const started = await chat();
    assert.deepEqual(texts(started), ['Welcome to Example Corp.', 'Say sales or support, or press 1 for sales, 2 for support, 3 to leave a voicemail.']);
    assert.equal(started.vars.call.from, '+15551234567');
    const done = await say(started.id, 'I need support please');
    assert.equal(done.state, 'completed');
    assert.ok(texts(done).includes('[transferring the call to +14155550101]'), texts(done).join(' | '));
  });

  it('records a voicemail and asks again when it does not understand', async () => {
    await red.deploy(example());
    const started = await chat();
    const again = await say(started.id, 'pizza');
    assert.equal(again.state, 'waiting');
    assert.ok(texts(again).includes('Sorry, I did not understand "pizza".'));
    const recording = await say(started.id, '3');
    assert.equal(recording.waitingAt.nodeId, 'ivr-record');
    const done = await say(started.id, 'Please call me back');
    assert.equal(done.state, 'completed');
    assert.equal(done.vars.voicemail, 'Please call me back');
    assert.ok(texts(done).includes('Thank you, your message was recorded. Goodbye.'));
  });

  it('answers a real call once credentials are filled in: menu by digits, then the transfer', async () => {
    const flows = example();
    const env = flows.find((n) => n.type === 'telco-voice-environment');
    env.credentials = { accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN, token: 'example-token-0123456789abcdef' };
    await red.deploy(flows);
    const call = new FakeTwilioCall(red);
    const first = await call.start('example-token-0123456789abcdef');
    assert.deepEqual(first.verbs.map((v) => v.verb), ['Say', 'Gather']);
    assert.equal(first.verbs[1].attrs.speechModel, 'phone_call');
    const next = await call.follow(first.verbs[1].attrs.action, { Digits: '1' });
    assert.deepEqual(next.verbs.map((v) => [v.verb, v.text]), [['Say', 'Connecting you to sales.'], ['Dial', '+14155550100'], ['Hangup', '']]);
  });
});
