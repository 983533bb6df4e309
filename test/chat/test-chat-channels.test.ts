import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import should from 'should';
import { NodeRed, REPO_ROOT, eventually } from '../harness/node-red';
import { chain, tab } from '../harness/flows';

type Flow = Array<Record<string, unknown> & { id: string; type: string }>;
const example = (name: string) => JSON.parse(readFileSync(join(REPO_ROOT, 'examples', `${name}.json`), 'utf8')) as Flow;
const idOf = (flow: Flow, type: string) => flow.find((n) => n.type === type)!.id;
const texts = (session: any) => session.transcript.map((l: any) => l.text);

/**
 * The Test chat plays each start's Channel (mode "channel"): the Session runs on that Channel with
 * the Test chat as its transport, so the flow takes that Channel's paths and nothing reaches a
 * provider (the examples' Environments have no credentials and no reachable API). Test Sessions
 * are kept in a durable store of their own, so a restart keeps them; Restart ends the one it replaces.
 */
describe('test chat: playing each Channel', function () {
  this.timeout(60000);
  let red: NodeRed;
  const three = example('One Process, three channels');
  const survey = example('SMS and WhatsApp survey');
  const helpDesk = example('Slack help-desk bot');
  const ivr = example('Phone IVR');
  const reminder = example('Appointment reminder');

  before(async function () {
    red = await NodeRed.start();
    await red.deploy([
      ...three,
      ...survey,
      ...helpDesk,
      ...ivr,
      ...reminder,
      tab('tcbtn', 'Buttons on SMS'),
      ...chain('tcbtn', [
        ['telco-sms-start', 'tcbtnstart', { environment: 'cssv000000000002', testData: { text: 'Hi' } }],
        ['telco-messenger-buttons', 'tcbtnbuttons', { contentSid: 'HX00000000000000000000000000000000', previewText: 'Pick [A] [B]' }],
        ['end-task', 'tcbtnend'],
      ]),
      tab('tcdur', 'Durable'),
      ...chain('tcdur', [
        ['session-start', 'tcdurstart', { testData: { text: 'hi' } }],
        ['input-task', 'tcdurask', { prompt: 'Your name?', resultVariable: 'name' }],
        ['output-task', 'tcdurout', { text: 'Hello {name}' }],
        ['end-task', 'tcdurend'],
      ]),
    ]);
  });
  after(async () => red?.close());

  async function startTest(start: string, body: Record<string, unknown> = {}) {
    const res = await red.admin('POST', '/channel-sessions/test-sessions', { start, ...body });
    should(res.status).equal(201, res.text);
    return res.body;
  }
  async function say(id: string, body: Record<string, unknown>) {
    const res = await red.admin('POST', `/channel-sessions/test-sessions/${id}/messages`, body);
    should(res.status).equal(200, res.text);
    return res.body;
  }

  it('runs each start of "One Process, three channels" on its own Channel, and on Chat when asked', async function () {
    const starts = three.filter((n) => /-start$/.test(n.type));
    const seen: Record<string, string> = {};
    for (const start of starts) {
      const s = await startTest(start.id, { mode: 'channel' });
      should(s.isTest).be.true();
      seen[start.type] = texts(s).find((t: string) => t.startsWith('Hello!'));
      should(s.vars.execution.channel).equal(s.channel);
      const variable = s.vars.teamchat ?? s.vars.call ?? s.vars.message;
      should(variable.channel).equal(s.channel, 'the start variable names the Channel played');
      should(variable.isTest).be.true();
      await red.admin('DELETE', `/channel-sessions/sessions/${s.id}`);
    }
    should(seen).eql({
      'teamchat-start': 'Hello! You reached the help desk on Slack.',
      'telco-call-start': 'Hello! You reached the help desk on the phone.',
      'telco-sms-start': 'Hello! You reached the help desk on SMS.',
      'telco-messenger-start': 'Hello! You reached the help desk on WhatsApp.',
    });
    // The plain Chat mode stays the default of the route.
    const chat = await startTest(idOf(three, 'telco-sms-start'));
    should(chat.channel).equal('Chat');
    should(texts(chat)).containEql('Hello! You reached the help desk on the Test chat.');
    await red.admin('DELETE', `/channel-sessions/sessions/${chat.id}`);
  });

  it("takes the survey's SMS branch from the SMS start, and its WhatsApp buttons from the WhatsApp start", async function () {
    const sms = await startTest(idOf(survey, 'telco-sms-start'), { mode: 'channel' });
    should(sms.waitingAt.nodeId).equal('cssv0000000000d2');
    should(texts(sms)).containEql('Would you recommend us? Reply YES or NO.');

    const wa = await startTest(idOf(survey, 'telco-messenger-start'), { mode: 'channel' });
    should(wa.waitingAt.nodeId).equal('cssv0000000000d1');
    const buttons = wa.transcript.find((l: any) => l.kind === 'buttons');
    should(buttons.detail.buttons).eql(['Yes', 'No']);
    const tapped = await say(wa.id, { button: { payload: 'Yes', text: 'Yes' } });
    should(tapped.vars.choice).eql({ payload: 'Yes', text: 'Yes', message: 'Yes', tapped: true });
    should(tapped.vars.recommend).equal('Yes');
    should(tapped.waitingAt.nodeId).equal('cssv0000000000f1');
    for (const s of [sms, wa]) await red.admin('DELETE', `/channel-sessions/sessions/${s.id}`);
  });

  it("shows the help desk's ticket card in the chat instead of posting it, and its button answers", async function () {
    const s = await startTest(idOf(helpDesk, 'teamchat-start'), { mode: 'channel' });
    should(s.channel).equal('TeamChatChannel');
    const asked = await say(s.id, { text: 'The printer jams' });
    const card = asked.transcript.find((l: any) => l.kind === 'blocks');
    should.exist(card, JSON.stringify(asked.transcript));
    should(card.text).equal('Ticket: The printer jams');
    // Nothing asks Slack and nothing fails: the notification to the support channel, which the example
    // leaves to the Default Channel it does not set, shows in the chat as where it would go.
    should(asked.transcript.filter((l: any) => l.kind === 'error' || l.kind === 'handled')).eql([]);
    const post = asked.transcript.find((l: any) => l.kind === 'post');
    should(post?.detail).eql({ channel: 'its Default Channel, not set yet' }, JSON.stringify(asked.transcript));
    should(asked.waitingAt.nodeId).equal('cshd000000000016');
    const button = card.detail.flatMap((b: any) => b.elements ?? []).find((e: any) => e.action_id === 'solved');
    const res = await red.admin('POST', `/channel-sessions/test-sessions/${s.id}/actions`, {
      action_id: 'solved',
      block_id: '',
      value: String(button.value),
      text: button.text.text,
    });
    should(res.status).equal(200, res.text);
    should(res.body.state).equal('completed');
    should(texts(res.body).some((t: string) => /^Glad it works again, <@U0123USER>/.test(t))).be.true(JSON.stringify(texts(res.body)));
  });

  it("goes on where a test Session's flow reaches an out node: the reminder not answered texts Ada in a test Session, with no account", async function () {
    for (const outcome of ['busy', 'no-answer']) {
      const call = await startTest('remind-call', { mode: 'channel', testData: { outcome } });
      const texted = await eventually(
        async () => ((await red.admin('GET', '/channel-sessions/sessions?ended=true')).body as any[]).find((s) => s.openedFrom === call.id),
        8000,
        `the text after the ${outcome} call`,
      );
      should(texted.isTest).be.true();
      should(texted.channel).equal('TelcoMessagingSms');
      const sms = await eventually(
        async () => {
          const d = (await red.admin('GET', `/channel-sessions/sessions/${texted.id}`)).body;
          return d.state === 'completed' && d;
        },
        8000,
        'the text Session to complete',
      );
      should(texts(sms)[0]).equal(
        'Hello Ada, we could not reach you by phone. A reminder from Example Clinic: your appointment is on Tuesday at 10:00. Please call us to confirm.',
      );
      should(sms.transcript.filter((l: any) => l.kind === 'error' || l.kind === 'handled')).eql([]);
      should(red.logs.filter((l) => /4008|ModuleMissingConfiguration/.test(l) && /Text Ada/.test(l))).eql([]);
    }
  });

  it('takes digits typed on a voice start as the call would, and the voice Tasks show in the chat', async function () {
    const s = await startTest('ivr-start', { mode: 'channel' });
    should(s.channel).equal('TelcoVoice');
    should(s.waitingAt.nodeId).equal('ivr-menu');
    const routed = await say(s.id, { text: '3' });
    should(routed.vars.choice).equal('3');
    should(routed.waitingAt.nodeId).equal('ivr-record');
    await red.admin('DELETE', `/channel-sessions/sessions/${s.id}`);
  });

  it('refuses WhatsApp buttons on an SMS Session as the real Channel does', async function () {
    const s = await startTest('tcbtnstart', { mode: 'channel' });
    should(s.channel).equal('TelcoMessagingSms');
    should(s.state).equal('ended');
    should(s.error.code).equal(3005);
    should(s.transcript.some((l: any) => l.kind === 'buttons')).be.false();
    // On Chat (the default mode) the preview shows, as before.
    const chat = await startTest('tcbtnstart');
    should(chat.transcript.find((l: any) => l.kind === 'buttons').detail.buttons).eql(['A', 'B']);
    await red.admin('DELETE', `/channel-sessions/sessions/${chat.id}`);
  });

  it('ends the Session a Restart replaces', async function () {
    const first = await startTest('tcdurstart');
    should(first.state).equal('waiting');
    const second = await startTest('tcdurstart', { replaces: first.id });
    should(second.state).equal('waiting');
    const old = await red.admin('GET', `/channel-sessions/sessions/${first.id}`);
    should(old.body.state).equal('ended');
    should(old.body.endReason).equal('Restarted from the Test chat in the editor');
    const live = (await red.admin('GET', '/channel-sessions/sessions')).body.filter((x: any) => x.process === 'tcdur');
    should(live.map((x: any) => x.id)).eql([second.id]);
    await red.admin('DELETE', `/channel-sessions/sessions/${second.id}`);
  });

  it('keeps a test Session over a restart of Node-RED, and it answers after', async function () {
    const s = await startTest('tcdurstart');
    should(s.waitingAt.nodeId).equal('tcdurask');
    await red.restart();
    const after = await red.admin('GET', `/channel-sessions/sessions/${s.id}`);
    should(after.status).equal(200, after.text);
    should(after.body.state).equal('waiting');
    const done = await eventually(
      async () => {
        const res = await red.admin('POST', `/channel-sessions/test-sessions/${s.id}/messages`, { text: 'Ada' });
        return res.status === 200 && res.body;
      },
      10000,
      'the answer after the restart',
    );
    should(done.state).equal('completed');
    should(texts(done)).containEql('Hello Ada');
  });
});
