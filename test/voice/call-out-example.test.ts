import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import should from 'should';
import { eventually, NodeRed, REPO_ROOT } from '../harness/node-red';
import { ACCOUNT_SID, AUTH_TOKEN } from '../fakes/twilio-voice-caller';
import { FakeTwilioApi } from '../fakes/twilio-api';
import { FakeTwilioMessagingApi } from '../fakes/twilio-messaging-api';
import { logsSince } from '../harness/voice-flows';

const example = (): any[] => JSON.parse(readFileSync(join(REPO_ROOT, 'examples', 'Appointment reminder.json'), 'utf8'));

/** examples/Appointment reminder.json deploys as is, runs each outcome in the Test chat, and calls through the (fake) provider. */
describe('example flow: Appointment reminder', function () {
  this.timeout(60000);
  let red: NodeRed;
  before(async function () {
    red = await NodeRed.start();
  });
  after(async () => red?.close());

  async function chat(testData?: Record<string, unknown>, mode?: 'channel' | 'chat') {
    const res = await red.admin('POST', '/channel-sessions/test-sessions', { start: 'remind-call', testData, mode });
    should(res.status).equal(201, res.text);
    return res.body;
  }
  async function say(id: string, text: string) {
    return (await red.admin('POST', `/channel-sessions/test-sessions/${id}/messages`, { text })).body;
  }
  const texts = (s: any) => s.transcript.map((l: any) => l.text);

  it('deploys as is without errors; in the Test chat a person confirms with 1', async function () {
    const mark = red.logs.length;
    await red.deploy(example());
    should(logsSince(red, mark).filter((l) => /\[error\]/.test(l))).eql([]);
    const started = await chat();
    should(texts(started)).eql([
      'Hello Ada, this is Example Clinic calling about your appointment on Tuesday at 10:00.',
      'Press 1 to confirm, or 2 to reschedule.',
    ]);
    should(started.vars.call).have.properties({ direction: 'outbound-api', answeredBy: 'human', from: '+15551234567' });
    const done = await say(started.id, '1');
    should(done.state).equal('completed');
    should(texts(done)).containEql('Thank you, your appointment on Tuesday at 10:00 is confirmed. Goodbye.');
  });

  it("writes the Channel the Test chat plays into {call}.channel, as an incoming call's", async function () {
    await red.deploy(example());
    const played = await chat(undefined, 'channel');
    should(played.channel).equal('TelcoVoice');
    should(played.vars.call).have.properties({ channel: 'TelcoVoice', isTest: true });
    const plain = await chat(undefined, 'chat');
    should(plain.vars.call).have.properties({ channel: 'Chat', isTest: true });
  });

  it('a machine gets the voicemail; busy goes to the SMS fallback', async function () {
    await red.deploy(example());
    const machine = await chat({ outcome: 'machine', vars: { name: 'Ada', when: 'Friday' } });
    should(machine.state).equal('completed');
    should(texts(machine)).containEql('Hello Ada, this is Example Clinic: a reminder of your appointment on Friday. Please call us back to confirm. Goodbye.');
    const mark = red.logs.length;
    const busy = await chat({ outcome: 'busy' });
    should(texts(busy).filter((t: string) => !/flow stopped/.test(t))).eql([]);
    should(logsSince(red, mark).filter((l) => /\[error\]/.test(l))).eql([]);
  });

  it('calls through the provider once the Environment is filled in: a person presses 2', async function () {
    const api = await FakeTwilioApi.start();
    try {
      const flows = example();
      const env = flows.find((n) => n.type === 'telco-voice-environment');
      Object.assign(env, { publicBaseUrl: red.url('').replace(/\/$/, ''), apiUrl: api.url, callerId: '+14155550100' });
      env.credentials = { accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN, webhookSigningSecret: '', token: 'remindToken0123456789abcdef' };
      await red.deploy(flows);
      should((await red.admin('POST', '/inject/remind-inject')).status).equal(200);
      const call = await eventually(() => api.calls[0], 10000, 'the call');
      should(call.form).have.properties({ To: '+15551234567', From: '+14155550100', MachineDetection: 'DetectMessageEnd' });
      const first = await api.answer(call, { AnsweredBy: 'human' });
      should(first.verbs.map((v) => v.verb)).eql(['Say', 'Gather']);
      const second = await api.signedPost(first.verbs[1].attrs.action, { ...api.callParams(call), CallStatus: 'in-progress', Digits: '2' });
      should(second.verbs.map((v) => [v.verb, v.text])).eql([
        ['Say', 'No problem, we will call you back to find a new time. Goodbye.'],
        ['Hangup', ''],
      ]);
    } finally {
      await api.close();
    }
  });
  it('a call nobody answers becomes a text through Text out, once both Environments are filled in', async function () {
    const api = await FakeTwilioApi.start();
    const sms = await FakeTwilioMessagingApi.start(ACCOUNT_SID, AUTH_TOKEN);
    try {
      const flows = example();
      const base = red.url('').replace(/\/$/, '');
      const voice = flows.find((n) => n.type === 'telco-voice-environment');
      Object.assign(voice, { publicBaseUrl: base, apiUrl: api.url, callerId: '+14155550100' });
      voice.credentials = { accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN, webhookSigningSecret: '', token: 'remindToken0123456789abcdef' };
      const messaging = flows.find((n) => n.type === 'telco-messaging-environment');
      Object.assign(messaging, { publicBaseUrl: base, apiUrl: sms.url });
      messaging.credentials = { accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN, webhookSigningSecret: '', token: 'remindSmsToken0123456789ab' };
      await red.deploy(flows);
      should((await red.admin('POST', '/inject/remind-inject')).status).equal(200);
      const call = await eventually(() => api.calls[0], 10000, 'the call');
      await api.status(call, 'no-answer');
      const [text] = await eventually(() => (sms.messages().length ? sms.messages() : undefined), 10000, 'the text');
      should(text).have.properties({
        To: '+15551234567',
        From: '+15557654321',
        Body: 'Hello Ada, we could not reach you by phone. A reminder from Example Clinic: your appointment is on Tuesday at 10:00. Please call us to confirm.',
      });
      await new Promise((r) => setTimeout(r, 300));
      should(sms.messages()).have.length(1);
    } finally {
      await sms.close();
      await api.close();
    }
  });
});
