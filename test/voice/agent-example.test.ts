import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import should from 'should';
import { NodeRed, REPO_ROOT, eventually } from '../harness/node-red';
import { ACCOUNT_SID, AUTH_TOKEN, FakeTwilioCall } from '../fakes/twilio-voice-caller';
import { FakeConversationRelay } from '../fakes/conversation-relay';
import { logsSince } from '../harness/voice-flows';

const example = (): any[] => JSON.parse(readFileSync(join(REPO_ROOT, 'examples', 'Phone agent.json'), 'utf8'));

/** examples/Phone agent.json deploys as is, runs in the Test chat with no account, and on a call. */
describe('example flow: Phone agent', function () {
  this.timeout(20000);
  let red: NodeRed;
  before(async function () {
    red = await NodeRed.start();
  });
  after(async () => red?.close());

  async function chat() {
    const res = await red.admin('POST', '/channel-sessions/test-sessions', { start: 'agent-start' });
    should(res.status).equal(201, res.text);
    return res.body;
  }
  async function say(id: string, text: string) {
    const res = await red.admin('POST', `/channel-sessions/test-sessions/${id}/messages`, { text });
    should(res.status).equal(200, res.text);
    return res.body;
  }
  const texts = async (id: string): Promise<string[]> => (await red.admin('GET', `/channel-sessions/sessions/${id}`)).body.transcript.map((l: any) => l.text);

  it('deploys as is without errors; in the Test chat it answers each line and hands over to a person', async function () {
    const mark = red.logs.length;
    await red.deploy(example());
    should(logsSince(red, mark).filter((l) => /\[error\]/.test(l))).eql([]);
    const started = await chat();
    should(started.state).equal('waiting');
    should(await texts(started.id)).eql(['Hello, this is the Example Corp assistant. How can I help?']);
    await say(started.id, 'what are your hours?');
    await eventually(async () => (await texts(started.id)).includes('You said: “what are your hours.” Ask for a person, or say bye.'), 3000, 'the answer');
    await say(started.id, 'a person please');
    const done = await eventually(
      async () => {
        const s = (await red.admin('GET', `/channel-sessions/sessions/${started.id}`)).body;
        return s.state === 'completed' ? s : undefined;
      },
      3000,
      'the hand-off',
    );
    should(done.vars.agent.handoffData).eql({ handoff: 'person', reason: 'asked for a person' });
    should(await texts(started.id)).containDeep(['Connecting you to a person.', '[transferring the call to +14155550100]']);
  });

  it('says goodbye on bye', async function () {
    await red.deploy(example());
    const started = await chat();
    await say(started.id, 'bye');
    await eventually(async () => (await texts(started.id)).includes('Thank you for calling. Goodbye.'), 3000, 'the goodbye');
  });

  it('talks on a real call once credentials are filled in: streamed answer, then the hand-off and the Dial', async function () {
    const flows = example();
    const env = flows.find((n) => n.type === 'telco-voice-environment');
    env.credentials = { accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN, webhookSigningSecret: '', token: 'agentExampleToken0123456' };
    await red.deploy(flows);
    const call = new FakeTwilioCall(red);
    const answer = await call.start('agentExampleToken0123456');
    const connect = answer.verbs[0];
    should(connect.verb).equal('Connect', answer.text);
    const relay = await FakeConversationRelay.connect(red.url(''), connect.children[0].attrs.url);
    relay.setup(call.callSid, { caller: call.baseParams().From });
    relay.prompt('hello');
    should((await relay.frames(3)).map((f) => [f.token, f.last])).eql([
      ['You said: ', false],
      ['“hello.” ', false],
      ['Ask for a person, or say bye.', true],
    ]);
    relay.dtmf('0');
    const end = (await relay.frames(4))[3];
    should(end.type).equal('end');
    await relay.close();
    const back = await call.follow(connect.attrs.action, { SessionId: 'VX' + '1'.repeat(32), SessionStatus: 'ended', HandoffData: end.handoffData });
    should(back.verbs.map((v) => [v.verb, v.text])).eql([
      ['Say', 'Connecting you to a person.'],
      ['Dial', '+14155550100'],
      ['Hangup', ''],
    ]);
  });
});
