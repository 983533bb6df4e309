import should from 'should';
import { watchStatuses } from '../harness/comms';
import { tab, uid } from '../harness/flows';
import { NodeRed, eventually } from '../harness/node-red';
import { FakeSlack } from '../fakes/slack-api';
import { SlackEvents } from '../fakes/slack-events';
import { SIGNING_SECRET, approvalDesk, helpDesk, teamchatEnvironment } from '../fakes/slack-flows';
import { SlackClicks } from '../fakes/slack-interactions';
import { FakeSocketMode } from '../fakes/slack-socket-mode';

type Statuses = Awaited<ReturnType<typeof watchStatuses>>;

/**
 * Socket Mode: events and clicks over Slack's WebSocket (a fake on loopback, reached through the
 * fake Web API's apps.connections.open), acknowledged by envelope id once taken, with the
 * connection's state on the start nodes and reconnects that neither lose nor double an event.
 */
describe('team chat: Socket Mode', function () {
  this.timeout(60000);
  let red: NodeRed;
  let fake: FakeSlack;
  let socket: FakeSocketMode;
  let slack: SlackEvents;
  let statuses: Statuses;
  let envId: string;
  let envName: string;
  let ids: { start: string; hello: string; ask: string; reply: string; end: string };

  before(async () => {
    fake = await FakeSlack.start();
    socket = await FakeSocketMode.start();
    fake.socketUrl = () => socket.url();
    // At debug level, so the Slack client's own lines (which our logger passes on there) are in the log.
    red = await NodeRed.start({ settings: { logging: { console: { level: 'debug' } } } });
    statuses = await watchStatuses(red);
  });
  after(async () => {
    statuses?.close();
    await red?.close();
    await socket?.close();
    await fake?.close();
  });

  /** Deploys the help desk on a Socket Mode Environment (replacing the previous one). */
  async function deploy(props: Record<string, unknown> = {}, credentials: Record<string, string> = { appToken: fake.appToken }, prepare?: () => void) {
    fake.reset();
    prepare?.();
    const z = uid('tab');
    envId = uid('env');
    envName = `Env ${envId}`;
    ids = { start: uid('s'), hello: uid('h'), ask: uid('a'), reply: uid('r'), end: uid('e') };
    const token = `tok${uid('m')}AAAAAAAAAAAAAAAAAAAA`;
    await red.deploy([tab(z, 'Help desk'), teamchatEnvironment(envId, token, fake, { socketMode: true, ...props }, credentials), ...helpDesk(z, envId, ids)]);
    slack = new SlackEvents(red, token, SIGNING_SECRET, fake.team);
  }

  function startStatus(): { fill?: string; text?: string } | undefined {
    return statuses.get(ids.start);
  }

  async function connected(): Promise<void> {
    await eventually(() => startStatus()?.text === `serves ${envName} · Socket Mode connected` && socket.live === 1, 10000, 'the Socket Mode connection');
  }

  async function sessions(): Promise<any[]> {
    return (await red.admin('GET', `/channel-sessions/sessions?environment=${envId}&ended=true`)).body;
  }

  async function session(id: string): Promise<any> {
    return (await red.admin('GET', `/channel-sessions/sessions/${id}`)).body;
  }

  async function waiting(): Promise<any> {
    return eventually(async () => (await sessions()).find((s) => s.state === 'waiting'), 5000, 'a waiting Session');
  }

  function texts(): string[] {
    return fake.callsOf('chat.postMessage').map((c) => c.body.text);
  }

  /** Sends an Events API envelope and checks it is acknowledged with its own envelope id. */
  async function event(body: Record<string, unknown>, retryAttempt = 0): Promise<void> {
    const ack = await socket.send('events_api', body, { retryAttempt });
    const sent = socket.sent[socket.sent.length - 1];
    should(ack.envelope_id).equal(sent.envelope_id);
  }

  describe('connected', () => {
    beforeEach(async () => {
      await deploy();
      await connected();
    });

    it('connects with the App-Level Token to the URL apps.connections.open gave, and says so in the log and the status', async () => {
      const opens = fake.callsOf('apps.connections.open');
      should(opens.length).be.above(0);
      should(opens.every((c) => c.token === fake.appToken)).be.true();
      should(socket.usedTickets[socket.usedTickets.length - 1]).equal(socket.tickets[socket.tickets.length - 1]);
      should(startStatus()).containEql({ fill: 'green' });
      await red.waitForLog(/Socket Mode connected: Slack said hello/);
      should(red.logs.some((l) => l.includes(fake.appToken) || l.includes(fake.botToken))).be.false('no token in the log');
    });

    it("keeps the connection's ticket and the envelopes' tokens out of the log, at debug level too", async () => {
      // A slash command starts nothing here; its payload carries a verification token and a response_url.
      await socket.send('slash_commands', {
        token: 'deprecated-verification-token',
        command: '/help',
        text: '',
        user_id: 'U9',
        channel_id: 'C9',
        response_url: 'https://hooks.slack.com/commands/T1/1/secret-response-path',
      });
      // The client did log both at debug level: the answer with the WebSocket URL, and the envelope.
      await red.waitForLog(/\[socket mode\] http request result: .*ticket=…/);
      await red.waitForLog(/\[socket mode\] Received a message on the WebSocket: .*"token":"…"/);
      const leaks = red.logs.filter(
        (l) => socket.tickets.some((t) => l.includes(t)) || l.includes('deprecated-verification-token') || l.includes('secret-response-path'),
      );
      should(leaks).eql([]);
    });

    it('acknowledges each envelope with its envelope_id and runs the conversation: a DM starts, a thread reply answers', async () => {
      fake.users.U1 = { name: 'ada', real_name: 'Ada Lovelace', display_name: 'Ada' };
      const dm = slack.direct('U1', 'I need help &amp; more');
      await event(slack.envelope(dm));
      const s = await waiting();
      const detail = await session(s.id);
      should(detail.vars.teamchat).containEql({
        text: 'I need help & more',
        from: 'U1',
        profileName: 'Ada',
        to: 'D0DIRECT1',
        thread: dm.ts,
        channel: 'TeamChatChannel',
        isTest: false,
      });
      await event(slack.envelope(slack.direct('U1', 'my printer', { thread_ts: dm.ts })));
      await eventually(async () => (await session(s.id)).state === 'completed', 5000, 'the Session to complete');
      should(texts()).deepEqual(['Hello Ada: I need help &amp; more', 'What else?', 'Got my printer']);
      should(fake.callsOf('chat.postMessage').every((c) => c.body.thread_ts === dm.ts && c.token === fake.botToken)).be.true();
    });

    it('handles the app_mention and message copies of a mention once, and ignores bots, edits and a retried envelope', async () => {
      const message = slack.channel('C0HELP001', 'U2', `<@${fake.botUserId}> the VPN is down`);
      await event(slack.envelope(slack.mention(message)));
      await event(slack.envelope(message));
      const first = slack.envelope(slack.channel('C0HELP001', 'U3', `<@${fake.botUserId}> printer`));
      await event(first);
      await event(first, 1);
      await event(slack.envelope(slack.direct('U4', 'from a bot', { bot_id: 'B0OTHER', subtype: 'bot_message' })));
      await event(slack.envelope(slack.direct('U4', 'an edit', { subtype: 'message_changed', hidden: true })));
      await eventually(async () => (await sessions()).filter((s) => s.state === 'waiting').length === 2, 5000, 'two waiting Sessions');
      const list = await sessions();
      should(list.map((s) => s.conversation).sort()).deepEqual([`C0HELP001/${String(message.ts)}`, `C0HELP001/${(first.event as { ts: string }).ts}`]);
      should(texts().filter((t) => t === 'What else?')).have.length(2);
    });

    it('acknowledges an envelope it runs nothing for (a slash command)', async () => {
      const ack = await socket.send('slash_commands', { command: '/help', text: '', user_id: 'U1', channel_id: 'C1' });
      should(ack.envelope_id).equal(socket.sent[socket.sent.length - 1].envelope_id);
      should(await sessions()).be.empty();
    });

    it('survives envelopes it cannot read and carries on with the next', async () => {
      socket.sendRaw('{"envelope_id":"bad-1","type":"events_api","payload":{}}');
      socket.sendRaw('{"envelope_id":"bad-2","type":"events_api"}');
      socket.sendRaw('not json at all');
      await event(slack.envelope(slack.direct('U1', 'still alive')));
      await waiting();
      should(red.logs.some((l) => /Uncaught|unhandled/i.test(l))).be.false();
    });

    it("keeps the conversation across Slack's refresh (a disconnect message) mid-conversation", async () => {
      const dm = slack.direct('U1', 'refresh me');
      await event(slack.envelope(dm));
      const s = await waiting();
      const before = socket.opened;
      socket.disconnect('refresh_requested');
      await eventually(() => socket.opened === before + 1 && socket.live === 1, 10000, 'a new connection');
      await connected();
      await red.waitForLog(/Socket Mode reconnecting: the connection closed/);
      await event(slack.envelope(slack.direct('U1', 'still here', { thread_ts: dm.ts })));
      await eventually(async () => (await session(s.id)).state === 'completed', 5000, 'the Session to complete');
      should(texts()).deepEqual(['Hello : refresh me', 'What else?', 'Got still here']);
      should(socket.acks.filter((a) => a.connection === before + 1)).have.length(1);
    });

    it('neither loses nor doubles an event when the connection drops with it in flight', async () => {
      const dm = slack.direct('U1', 'drop me');
      await event(slack.envelope(dm));
      const s = await waiting();
      const before = socket.opened;
      // Its acknowledgement, if the app got it at all, cannot arrive: the connection is gone.
      void socket.send('events_api', slack.envelope(slack.direct('U1', 'the answer', { thread_ts: dm.ts })), { timeoutMs: 1000 }).catch(() => undefined);
      socket.drop();
      await eventually(() => socket.opened === before + 1, 10000, 'a new connection');
      await eventually(async () => (await session(s.id)).state === 'completed', 10000, 'the Session to complete');
      // Slack delivers what was not acknowledged again; it was taken once either way.
      await eventually(() => socket.unacknowledged().length === 0, 5000, 'every envelope acknowledged');
      should(texts()).deepEqual(['Hello : drop me', 'What else?', 'Got the answer']);
      should(await sessions()).have.length(1);
    });

    it('a redeploy closes the old connection and opens one for the new Environment', async () => {
      const before = socket.opened;
      await deploy();
      await connected();
      should(socket.opened).equal(before + 1);
      should(socket.live).equal(1);
    });
  });

  describe('buttons over the socket', () => {
    it('a block_actions envelope is acknowledged and answers the waiting InputTask', async () => {
      fake.reset();
      const z = uid('tab');
      envId = uid('env');
      envName = `Env ${envId}`;
      const token = `tok${uid('m')}AAAAAAAAAAAAAAAAAAAA`;
      const flow = { start: uid('s'), blocks: uid('b'), ask: uid('a'), reply: uid('r'), end: uid('e') };
      ids = { start: flow.start, hello: '', ask: '', reply: '', end: '' };
      await red.deploy([
        tab(z, 'Approvals'),
        teamchatEnvironment(envId, token, fake, { socketMode: true }, { appToken: fake.appToken }),
        ...approvalDesk(z, envId, flow),
      ]);
      slack = new SlackEvents(red, token, SIGNING_SECRET, fake.team);
      await connected();
      const dm = slack.direct('U1', 'approve please');
      await event(slack.envelope(dm));
      const s = await waiting();
      const blocks = fake.callsOf('chat.postMessage').find((c) => c.body.blocks)!;
      const clicks = new SlackClicks(red, token, SIGNING_SECRET, fake.origin, fake.team);
      const payload = clicks.button(
        { user: 'U1', channel: blocks.body.channel, messageTs: blocks.result!.ts, threadTs: blocks.body.thread_ts },
        { action_id: 'approve', block_id: 'decide', text: 'Approve', value: 'yes' },
      );
      const ack = await socket.send('interactive', payload);
      should(ack.envelope_id).equal(socket.sent[socket.sent.length - 1].envelope_id);
      const done = await eventually(
        async () => {
          const d = await session(s.id);
          return d.state === 'completed' ? d : undefined;
        },
        5000,
        'the Session to complete',
      );
      should(done.vars.decision_action).deepEqual({ action_id: 'approve', block_id: 'decide', value: 'yes', text: 'Approve', user: 'U1' });
      should(texts()).containEql('You chose yes (Approve via approve in decide, by U1)');
    });
  });

  describe('refused', () => {
    async function refused(text: string, log: RegExp): Promise<void> {
      await eventually(() => startStatus()?.text === `serves ${envName} · Socket Mode refused: ${text}`, 10000, `the status "${text}"`);
      should(startStatus()?.fill).equal('red');
      await red.waitForLog(log);
    }

    it('says so when the App-Level Token is wrong, is a bot token, or is missing', async () => {
      await deploy({}, { appToken: 'xapp-1-not-the-token' });
      await refused('bad App-Level Token', /Socket Mode refused: the App-Level Token was refused \(invalid_auth\)/);
      await deploy({}, { appToken: fake.botToken });
      await refused('bad App-Level Token', /Socket Mode refused: the App-Level Token was refused \(not_allowed_token_type\)/);
      await deploy({}, {});
      await refused('no App-Level Token', /Socket Mode refused: there is no App-Level Token/);
      should(red.logs.some((l) => l.includes('xapp-1-not-the-token') || l.includes(fake.botToken))).be.false('no token in the log');
    });

    it('says so when Socket Mode is off in the Slack app', async () => {
      await deploy({}, { appToken: fake.appToken }, () => (fake.socketModeEnabled = false));
      await refused('Socket Mode off in the app', /Socket Mode refused: Socket Mode is off in the Slack app \(socket_mode_not_enabled\)/);
      fake.socketModeEnabled = true;
    });
  });
});
