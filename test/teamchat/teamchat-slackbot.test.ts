import should from 'should';
import { tab, uid } from '../harness/flows';
import { NodeRed, eventually } from '../harness/node-red';
import { FakeSlack } from '../fakes/slack-api';
import { SlackEvents } from '../fakes/slack-events';
import { SIGNING_SECRET, helpDesk, teamchatEnvironment } from '../fakes/slack-flows';

/**
 * Slackbot (user USLACKBOT) writes as a user, with no bot_id and no subtype: reminders, /remind,
 * automated replies in the app's DM. It is a bot: it never starts or continues anything (SPEC 6).
 */
describe('team chat: messages from Slackbot', function () {
  let red: NodeRed;
  let fake: FakeSlack;
  let slack: SlackEvents;
  const envId = uid('env');
  const token = `tok${uid('t')}AAAAAAAAAAAAAAAAAAAA`;
  const ids = { start: uid('s'), hello: uid('h'), ask: uid('a'), reply: uid('r'), end: uid('e') };

  before(async function () {
    fake = await FakeSlack.start();
    red = await NodeRed.start();
    const z = uid('tab');
    // PerChannel: any later direct message continues the Session, so a Slackbot message could too.
    await red.deploy([
      tab(z, 'Help desk'),
      teamchatEnvironment(envId, token, fake, { sessionMode: 'PerChannel', startFromChannel: true }),
      ...helpDesk(z, envId, ids),
    ]);
    slack = new SlackEvents(red, token, SIGNING_SECRET, fake.team);
  });
  after(async function () {
    await red?.close();
    await fake?.close();
  });

  async function sessions(): Promise<any[]> {
    return (await red.admin('GET', `/channel-sessions/sessions?environment=${envId}&ended=true`)).body;
  }

  async function session(id: string): Promise<any> {
    return (await red.admin('GET', `/channel-sessions/sessions/${id}`)).body;
  }

  async function send(event: Record<string, unknown>): Promise<void> {
    const res = await slack.post(slack.envelope(event));
    res.status.should.equal(200, res.text);
  }

  /** A Slackbot message as Slack delivers it: a user id, no bot_id, no subtype, no client_msg_id. */
  function fromSlackbot(channel: string, text: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
    const ts = slack.nextTs();
    return {
      type: 'message',
      user: 'USLACKBOT',
      text,
      ts,
      event_ts: ts,
      team: fake.team,
      channel,
      channel_type: channel.startsWith('D') ? 'im' : 'channel',
      ...extra,
    };
  }

  it('a Slackbot direct message or channel message with a mention starts no Session and gets no reply', async function () {
    await send(fromSlackbot('D0DIRECT1', 'Reminder: check the queue.'));
    const mention = fromSlackbot('C0GENERAL', `Reminder: <@${fake.botUserId}> stand-up`);
    await send(mention);
    await send(slack.mention(mention));
    // A person's message after them is handled: the Slackbot ones were read and left no trace.
    await send(slack.direct('U1', 'hello'));
    const [started] = await eventually(
      async () => {
        const list = await sessions();
        return list.length ? list : undefined;
      },
      5000,
      'the Session of U1',
    );
    await eventually(async () => (await session(started.id)).state === 'waiting', 5000, 'the Session to wait');
    (await sessions()).should.have.length(1);
    const posted = fake.callsOf('chat.postMessage').map((c) => String(c.body.text));
    posted.should.eql(['Hello : hello', 'What else?']);
  });

  it("a Slackbot message in a live Session does not answer its InputTask; the person's next message does", async function () {
    const [live] = (await sessions()).filter((s: any) => s.state === 'waiting');
    should(live).be.ok();
    await send(fromSlackbot('D0DIRECT1', 'Slackbot: your reminder'));
    await send(slack.direct('U1', 'my real answer'));
    const done = await eventually(
      async () => {
        const d = await session(live.id);
        return d.state === 'completed' ? d : undefined;
      },
      5000,
      'the Session to complete',
    );
    done.vars.answer.should.equal('my real answer');
    done.history.map((h: any) => h.text).should.not.containEql('Slackbot: your reminder');
  });
});
