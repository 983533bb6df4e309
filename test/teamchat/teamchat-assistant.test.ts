import should from 'should';
import { node, tab, uid } from '../harness/flows';
import { NodeRed, eventually } from '../harness/node-red';
import { FakeSlack } from '../fakes/slack-api';
import { SlackEvents } from '../fakes/slack-events';
import { SIGNING_SECRET, teamchatEnvironment } from '../fakes/slack-flows';

/** Assistant threads: suggested prompts when one opens, and {teamchat.context} kept up to date in the live Session. */
describe('team chat: assistant threads', function () {
  this.timeout(30000);
  let red: NodeRed;
  let fake: FakeSlack;
  let slack: SlackEvents;
  let envId: string;
  const prompts = [
    { title: 'Summarise', message: 'Summarise this channel' },
    { title: 'Draft', message: 'Draft a reply' },
  ];

  before(async function () {
    fake = await FakeSlack.start();
    red = await NodeRed.start();
    const z = uid('tab');
    envId = uid('env');
    const token = `tok${uid('t')}BBBBBBBBBBBBBBBBBBBB`;
    await red.deploy([
      tab(z, 'Assistant'),
      teamchatEnvironment(envId, token, fake),
      node('teamchat-start', uid('s'), z, { environment: envId, variable: 'teamchat', suggestedPrompts: prompts }, [['first']]),
      node('output-task', 'first', z, { text: 'Looking at {teamchat.context.channelId} in {teamchat.context.teamId}' }, [['ask'], []]),
      node('input-task', 'ask', z, { prompt: '', resultVariable: 'more' }, [['now'], []]),
      node('output-task', 'now', z, { text: 'Now at {teamchat.context.channelId}' }, [['ask'], []]),
    ]);
    slack = new SlackEvents(red, token, SIGNING_SECRET, fake.team);
  });
  after(async function () {
    await red?.close();
    await fake?.close();
  });

  /** Slack's event for an assistant thread, as its docs show it. */
  function threadEvent(type: string, threadTs: string, channelId: string) {
    return {
      type,
      assistant_thread: {
        user_id: 'U1',
        channel_id: 'D0DIRECT1',
        thread_ts: threadTs,
        context: { channel_id: channelId, team_id: fake.team, enterprise_id: 'E0ENT1' },
      },
      event_ts: slack.nextTs(),
    };
  }

  async function posts(count: number): Promise<string[]> {
    return eventually(
      () => {
        const texts = fake.callsOf('chat.postMessage').map((c) => String(c.body.text));
        return texts.length >= count ? texts : undefined;
      },
      8000,
      `${count} posts`,
    );
  }

  it('sets the suggested prompts when an assistant thread opens, and gives the Session its context, updated when it changes', async function () {
    const threadTs = slack.nextTs();
    should((await slack.post(slack.envelope(threadEvent('assistant_thread_started', threadTs, 'C0GENERAL')))).status).equal(200);
    const set = await eventually(() => fake.callsOf('assistant.threads.setSuggestedPrompts')[0], 5000, 'the prompts');
    should(set.body).eql({ channel_id: 'D0DIRECT1', thread_ts: threadTs, prompts });
    should(set.result).eql({ ok: true });

    // The person's first message in that thread opens the Session with the thread's context.
    should((await slack.post(slack.envelope(slack.direct('U1', 'Summarise this channel', { thread_ts: threadTs })))).status).equal(200);
    should(await posts(1)).eql([`Looking at C0GENERAL in ${fake.team}`]);

    // The person looks at another channel: the live Session's {teamchat.context} follows.
    should((await slack.post(slack.envelope(threadEvent('assistant_thread_context_changed', threadTs, 'C0RANDOM')))).status).equal(200);
    const list = (await red.admin('GET', `/channel-sessions/sessions?environment=${envId}`)).body as any[];
    await eventually(
      async () => (await red.admin('GET', `/channel-sessions/sessions/${list[0].id}`)).body.vars.teamchat.context.channelId === 'C0RANDOM',
      5000,
      'the context in the Session',
    );
    should((await red.admin('GET', `/channel-sessions/sessions/${list[0].id}`)).body.vars.teamchat.context).eql({
      channelId: 'C0RANDOM',
      teamId: fake.team,
      enterpriseId: 'E0ENT1',
    });
    should((await slack.post(slack.envelope(slack.direct('U1', 'and now?', { thread_ts: threadTs })))).status).equal(200);
    should((await posts(2))[1]).equal('Now at C0RANDOM');
  });

  /** An agent app (Slack's agent_view): the conversation names no thread, the context lists entities. */
  function agentEvent(type: string, channelId: string, extra: Record<string, unknown> = {}) {
    return {
      type,
      user: 'U1',
      channel: 'D0DIRECT2',
      event_ts: slack.nextTs(),
      context: {
        entities: [
          { type: 'slack#/types/canvas_id', value: 'F0CANVAS' },
          { type: 'slack#/types/channel_id', value: channelId, team_id: fake.team },
        ],
      },
      ...extra,
    };
  }

  it("sets an agent app's prompts when its messages open (no thread named), and the Session opens with the latest context", async function () {
    fake.reset();
    // The Home tab is the app's page: no prompts there.
    should((await slack.post(slack.envelope(agentEvent('app_home_opened', 'C0GENERAL', { tab: 'home' })))).status).equal(200);
    should((await slack.post(slack.envelope(agentEvent('app_home_opened', 'C0GENERAL', { tab: 'messages' })))).status).equal(200);
    const set = await eventually(() => fake.callsOf('assistant.threads.setSuggestedPrompts')[0], 5000, 'the prompts');
    should(set.body).eql({ channel_id: 'D0DIRECT2', prompts });
    should((await slack.post(slack.envelope(agentEvent('app_context_changed', 'C0RANDOM')))).status).equal(200);
    should((await slack.post(slack.envelope(slack.direct('U1', 'Summarise this channel', { channel: 'D0DIRECT2' })))).status).equal(200);
    should(await posts(1)).eql([`Looking at C0RANDOM in ${fake.team}`]);
    should(fake.callsOf('assistant.threads.setSuggestedPrompts').length).equal(1);
  });
});
