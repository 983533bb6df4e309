import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import should from 'should';
import { node, tab, uid, type FlowNode } from '../harness/flows';
import { NODE_RED_DIR, NodeRed, eventually } from '../harness/node-red';
import { FakeSlack } from '../fakes/slack-api';
import { SlackEvents } from '../fakes/slack-events';
import { SIGNING_SECRET, teamchatEnvironment } from '../fakes/slack-flows';

const BLOCKS = [
  { type: 'header', text: { type: 'plain_text', text: 'Ticket' } },
  { type: 'section', text: { type: 'mrkdwn', text: '*From* {who}: {said}' } },
];

/** TeamChatBlockMessage, TeamChatNotification, the retired TeamChatPostMessage, the start endpoint and the test chat. */
describe('team chat: block messages, notifications, start endpoint, test chat', function () {
  let red: NodeRed;
  let fake: FakeSlack;
  let slack: SlackEvents;
  let envId: string;
  let token: string;

  before(async function () {
    fake = await FakeSlack.start();
    red = await NodeRed.start();
  });
  after(async function () {
    await red?.close();
    await fake?.close();
  });

  async function deploy(
    flow: (z: string, envId: string) => FlowNode[],
    props: Record<string, unknown> = {},
    credentials: Record<string, string> = {},
    tabProps: Record<string, unknown> = {},
  ) {
    fake.reset();
    const z = uid('tab');
    envId = uid('env');
    token = `tok${uid('t')}CCCCCCCCCCCCCCCCCCCC`;
    await red.deploy([{ ...tab(z, 'Posts'), ...tabProps }, teamchatEnvironment(envId, token, fake, props, credentials), ...flow(z, envId)]);
    slack = new SlackEvents(red, token, SIGNING_SECRET, fake.team);
  }

  /** inject (with msg.vars from a function) -> Task -> reporter of both outputs into the log. */
  function oneShot(z: string, task: FlowNode, vars: Record<string, unknown> = {}): FlowNode[] {
    const tag = task.id;
    return [
      node('inject', `inj${tag}`, z, { props: [{ p: 'payload' }], payload: '<!channel> from payload', payloadType: 'str', once: false }, [[`fn${tag}`]]),
      node('function', `fn${tag}`, z, { func: `msg.vars = ${JSON.stringify(vars)}; return msg;`, outputs: 1 }, [[tag]]),
      { ...task, wires: [[`ok${tag}`], [`err${tag}`]] },
      node('function', `ok${tag}`, z, { func: `node.warn("done ${tag}"); return null;`, outputs: 1 }, [[]]),
      node('function', `err${tag}`, z, { func: `node.warn("branch ${tag} " + msg.error.code + " " + msg.error.message); return null;`, outputs: 1 }, [[]]),
    ];
  }

  async function inject(id: string): Promise<void> {
    const res = await red.admin('POST', `/inject/inj${id}`);
    should(res.status).equal(200, res.text);
  }

  /** A node's status as the editor sees it: the runtime's retained `status/<id>` comms message. */
  async function statusOf(id: string): Promise<{ text?: string; fill?: string }> {
    // Node 20 has no WebSocket global; Node-RED's own `ws` is what the editor talks to.
    const WebSocket = require(require.resolve('ws', { paths: [NODE_RED_DIR] }));
    const ws = new WebSocket(red.url('/comms').replace(/^http/, 'ws'));
    try {
      const got = new Promise<any>((resolve) =>
        ws.on('message', (data: Buffer) => {
          const found = (JSON.parse(String(data)) as any[]).find((m) => m.topic === `status/${id}`);
          if (found) resolve(found.data);
        }),
      );
      await new Promise((r) => ws.on('open', r));
      ws.send(JSON.stringify({ subscribe: `status/${id}` }));
      return await got;
    } finally {
      ws.close();
    }
  }

  async function session(id: string): Promise<any> {
    return (await red.admin('GET', `/channel-sessions/sessions/${id}`)).body;
  }

  // ---- TeamChatBlockMessage ------------------------------------------------------------------

  it('block message: the three JSON forms post the same blocks; placeholder values are escaped text', async function () {
    const forms = [JSON.stringify(BLOCKS), JSON.stringify(BLOCKS[1]), JSON.stringify({ blocks: BLOCKS })];
    const tasks = forms.map((blocks, i) =>
      node('teamchat-block-message', `blk${i}${uid('b')}`, '', { environment: '', channel: 'C0OPS', notificationText: 'New ticket from {who}', blocks }),
    );
    await deploy((z, env) =>
      tasks.flatMap((t) => oneShot(z, { ...t, z, environment: env }, { who: '<!here>', said: '<https://evil.example|click> ] } {"type":"actions"}' })),
    );
    for (const t of tasks) {
      await inject(t.id);
      await red.waitForLog(new RegExp(`done ${t.id}`));
    }
    const posts = fake.callsOf('chat.postMessage').map((c) => c.body);
    should(posts.length).equal(3);
    const section = { type: 'section', text: { type: 'mrkdwn', text: '*From* &lt;!here&gt;: &lt;https://evil.example|click&gt; ] } {"type":"actions"}' } };
    should(posts[0].blocks).eql([BLOCKS[0], section]);
    should(posts[1].blocks).eql([section]);
    should(posts[2].blocks).eql([BLOCKS[0], section]);
    should(posts.every((p) => p.channel === 'C0OPS' && p.text === 'New ticket from &lt;!here&gt;' && p.thread_ts === undefined)).be.true();
  });

  it("block message: a field that is exactly one placeholder takes the variable's value as JSON", async function () {
    const blocks = JSON.stringify([{ type: 'section', text: { type: 'mrkdwn', text: 'Order {order.id}' }, fields: '{order.fields}' }, '{extra}']);
    const task = node('teamchat-block-message', uid('blk'), '', { channel: 'C0OPS', notificationText: '', blocks });
    const whole = node('teamchat-block-message', uid('blw'), '', { channel: 'C0OPS', notificationText: '', blocks: '{saved}' });
    const fields = [
      { type: 'mrkdwn', text: '*Qty* 2' },
      { type: 'mrkdwn', text: '*Total* 10' },
    ];
    const vars = { order: { id: 'A<1>', fields }, extra: { type: 'divider' }, saved: JSON.stringify([{ type: 'divider' }]) };
    await deploy((z, env) => [...oneShot(z, { ...task, z, environment: env }, vars), ...oneShot(z, { ...whole, z, environment: env }, vars)]);
    await inject(task.id);
    await red.waitForLog(new RegExp(`done ${task.id}`));
    await inject(whole.id);
    await red.waitForLog(new RegExp(`done ${whole.id}`));
    const [first, second] = fake.callsOf('chat.postMessage').map((c) => c.body);
    should(first.blocks).eql([{ type: 'section', text: { type: 'mrkdwn', text: 'Order A&lt;1&gt;' }, fields }, { type: 'divider' }]);
    should(first.text).equal('New message', 'the default Notification text');
    should(second.blocks).eql([{ type: 'divider' }]);
  });

  it('block message: invalid JSON, no blocks, or a block without type stop with 3005 and nothing is posted', async function () {
    const bad = ['', '{not json', '[]', '{"text":"no type"}', '[{"type":"section"},{"text":"x"}]', '"just text"'];
    const tasks = bad.map((blocks) => node('teamchat-block-message', uid('bad'), '', { channel: 'C0OPS', blocks }));
    await deploy((z, env) => tasks.flatMap((t) => oneShot(z, { ...t, z, environment: env })));
    for (const t of tasks) {
      await inject(t.id);
      await red.waitForLog(new RegExp(`branch ${t.id} 3005 Block Kit JSON`));
    }
    should(fake.callsOf('chat.postMessage').length).equal(0);
  });

  it('block message: Slack rejecting the blocks takes the error branch with 4001 and the reason', async function () {
    const task = node('teamchat-block-message', uid('rej'), '', { channel: 'C0OPS', blocks: '[{"type":"bogus"}]' });
    await deploy((z, env) => oneShot(z, { ...task, z, environment: env }));
    fake.failures.set('chat.postMessage', 'invalid_blocks');
    await inject(task.id);
    await red.waitForLog(new RegExp(`branch ${task.id} 4001 chat\\.postMessage: Slack answered invalid_blocks`));
  });

  it('block message: outside a Session with no Channel and no Default Channel it stops with 4012; with one it posts there', async function () {
    const task = node('teamchat-block-message', uid('nch'), '', { channel: '', blocks: '[{"type":"divider"}]' });
    await deploy((z, env) => oneShot(z, { ...task, z, environment: env }));
    await inject(task.id);
    await red.waitForLog(new RegExp(`branch ${task.id} 4012 No channel to post to`));
    should(fake.callsOf('chat.postMessage').length).equal(0);
    await deploy((z, env) => oneShot(z, { ...task, z, environment: env }), { defaultChannel: 'C0DEFAULT' });
    await inject(task.id);
    await eventually(() => fake.callsOf('chat.postMessage')[0]?.body.channel === 'C0DEFAULT');
  });

  it("block message: a typed Channel read from the flow tab's env posts there (used as is)", async function () {
    const task = node('teamchat-block-message', uid('benv'), '', {
      channel: 'OPS_CHANNEL',
      channelType: 'env',
      notificationText: 'Env',
      blocks: '[{"type":"divider"}]',
    });
    await deploy(
      (z, env) => oneShot(z, { ...task, z, environment: env }),
      { defaultChannel: 'C0DEFAULT' },
      {},
      { env: [{ name: 'OPS_CHANNEL', value: 'C0FROMENV', type: 'str' }] },
    );
    await inject(task.id);
    await red.waitForLog(new RegExp(`done ${task.id}`));
    should(fake.callsOf('chat.postMessage').map((c) => c.body.channel)).eql(['C0FROMENV']);
  });

  it('block message: in a team-chat Session it posts in the thread and joins the history as blocks', async function () {
    const z0 = uid('z');
    await deploy((z, env) => [
      node('teamchat-start', `st${z0}`, z, { environment: env }, [[`bk${z0}`]]),
      node(
        'teamchat-block-message',
        `bk${z0}`,
        z,
        {
          channel: '',
          notificationText: 'For {teamchat.from}',
          blocks: JSON.stringify([{ type: 'section', text: { type: 'plain_text', text: '{teamchat.text}' } }]),
        },
        [[`in${z0}`], []],
      ),
      node('input-task', `in${z0}`, z, { prompt: '', resultVariable: 'answer' }, [[], []]),
    ]);
    const event = slack.direct('U1', 'printer <!channel> broken');
    await slack.post(slack.envelope(event));
    const post = await eventually(() => fake.callsOf('chat.postMessage')[0]);
    should(post.body.thread_ts).equal(event.ts);
    should(post.body.channel).equal('D0DIRECT1');
    should(post.body.blocks).eql([{ type: 'section', text: { type: 'plain_text', text: 'printer &lt;!channel&gt; broken' } }]);
    const list = (await red.admin('GET', `/channel-sessions/sessions?environment=${envId}`)).body;
    const s = await eventually(async () => {
      const d = await session(list[0].id);
      return d.state === 'waiting' ? d : undefined;
    });
    const entry = s.history.find((h: any) => h.kind === 'blocks');
    should(entry.text).equal('For U1');
    should(entry.detail).eql(post.body.blocks);
  });

  // ---- test chat -----------------------------------------------------------------------------

  it("test chat: the start's test data becomes {teamchat}; a block message posts to the Default Channel for real", async function () {
    const start = uid('tst');
    await deploy(
      (z, env) => [
        node('teamchat-start', start, z, { environment: env, variable: 'teamchat', testData: {} }, [[`${start}b`]]),
        node(
          'teamchat-block-message',
          `${start}b`,
          z,
          { channel: '', notificationText: 'Preview', blocks: '[{"type":"section","text":{"type":"mrkdwn","text":"{teamchat.text}"}}]' },
          [[`${start}o`], []],
        ),
        node(
          'output-task',
          `${start}o`,
          z,
          { text: 'Hi {teamchat.profileName} ({teamchat.from} in {teamchat.to}, {teamchat.channel}, test {teamchat.isTest})' },
          [[`${start}e`], []],
        ),
        node('end-task', `${start}e`, z, {}),
      ],
      { defaultChannel: 'C0DEFAULT' },
    );
    const res = await red.admin('POST', '/channel-sessions/test-sessions', {
      start,
      testData: { text: 'hello <b>', from: 'U0TEST', to: 'D0TEST', team: 'T0TEST', thread: '1.2', profileName: 'Tess' },
    });
    should(res.status).equal(201, res.text);
    const s = res.body;
    should(s.state).equal('completed', JSON.stringify(s.transcript));
    should({ ...s.vars.teamchat, files: undefined }).eql({
      text: 'hello <b>',
      files: undefined,
      from: 'U0TEST',
      profileName: 'Tess',
      to: 'D0TEST',
      team: 'T0TEST',
      thread: '1.2',
      messageId: '',
      channel: 'Chat',
      isTest: true,
    });
    const post = fake.callsOf('chat.postMessage')[0].body;
    should(post.channel).equal('C0DEFAULT');
    should(post.thread_ts).equal(undefined);
    should(post.blocks).eql([{ type: 'section', text: { type: 'mrkdwn', text: 'hello &lt;b&gt;' } }]);
    should(s.transcript.map((l: any) => [l.kind, l.text]).slice(0, 3)).eql([
      ['message', 'hello <b>'],
      ['blocks', 'Preview'],
      ['message', 'Hi Tess (U0TEST in D0TEST, Chat, test true)'],
    ]);
  });

  it('test chat: without a Default Channel the block message stops with 4012', async function () {
    const start = uid('tsn');
    await deploy((z, env) => [
      node('teamchat-start', start, z, { environment: env, testData: { text: 'hi' } }, [[`${start}b`]]),
      node('teamchat-block-message', `${start}b`, z, { channel: '', blocks: '[{"type":"divider"}]' }, [[], []]),
    ]);
    const res = await red.admin('POST', '/channel-sessions/test-sessions', { start });
    should(res.body.state).equal('ended');
    should(res.body.log.find((l: any) => l.level === 'error').code).equal(4012);
    should(fake.callsOf('chat.postMessage').length).equal(0);
  });

  it('test chat: without a text the start asks for the opening message, which becomes {teamchat.text} and files', async function () {
    const start = uid('tso');
    await deploy((z, env) => [
      node('teamchat-start', start, z, { environment: env, testData: { from: 'U0T' } }, [[`${start}o`]]),
      node('output-task', `${start}o`, z, { text: 'You said {teamchat.text} with {teamchat.files.count} file(s)' }, [[`${start}e`], []]),
      node('end-task', `${start}e`, z, {}),
    ]);
    const res = await red.admin('POST', '/channel-sessions/test-sessions', { start });
    should(res.body.state).equal('waiting');
    should(res.body.transcript[0].kind).equal('prompt');
    const said = await red.admin('POST', `/channel-sessions/test-sessions/${res.body.id}/messages`, {
      text: 'typed opening',
      files: [{ name: 'a.txt', type: 'text/plain', data: Buffer.from('x').toString('base64') }],
    });
    should(said.body.state).equal('completed');
    should(said.body.vars.teamchat.from).equal('U0T');
    should(said.body.transcript.some((l: any) => l.text === 'You said typed opening with 1 file(s)')).be.true();
  });

  // ---- TeamChatNotification ------------------------------------------------------------------

  it('notification: posts from any flow to the Default Channel, escaped, not threaded', async function () {
    const task = node('teamchat-notification', uid('nt'), '', { channel: '', message: 'Alert: {payload}', attachments: '' });
    await deploy(
      (z, env) => oneShot(z, { ...task, z, environment: env }).map((n) => (n.type === 'function' && n.id.startsWith('fn') ? { ...n, func: 'return msg;' } : n)),
      { defaultChannel: 'C0ALERTS' },
    );
    await inject(task.id);
    await red.waitForLog(new RegExp(`done ${task.id}`));
    const post = fake.callsOf('chat.postMessage')[0].body;
    should([post.channel, post.text, post.thread_ts]).eql(['C0ALERTS', 'Alert: &lt;!channel&gt; from payload', undefined]);
    should((await statusOf(task.id)).text).equal('posted to C0ALERTS');
  });

  it('notification: posts the message, then its files below it, to a named channel', async function () {
    mkdirSync(join(red.userDir, 'channel-sessions', 'workspace'), { recursive: true });
    writeFileSync(join(red.userDir, 'channel-sessions', 'workspace', 'report.txt'), 'weekly numbers');
    const task = node('teamchat-notification', uid('nf'), '', { channel: '{target}', message: 'Report for {team}', attachments: 'ref-workspace:report.txt' });
    await deploy((z, env) => oneShot(z, { ...task, z, environment: env }, { target: 'C0REPORTS', team: 'ops' }));
    await inject(task.id);
    await red.waitForLog(new RegExp(`done ${task.id}`));
    should(fake.calls.filter((c) => c.method !== 'auth.test').map((c) => c.method)).eql([
      'chat.postMessage',
      'files.getUploadURLExternal',
      'files.completeUploadExternal',
    ]);
    const complete = fake.callsOf('files.completeUploadExternal')[0].body;
    should(complete.channel_id).equal('C0REPORTS');
    should(complete.thread_ts).equal(undefined);
    should([...fake.uploads.values()][0].data.toString()).equal('weekly numbers');
  });

  it('notification: to a channel given by name (#general), its files are shared in the channel id the post answered', async function () {
    mkdirSync(join(red.userDir, 'channel-sessions', 'workspace'), { recursive: true });
    writeFileSync(join(red.userDir, 'channel-sessions', 'workspace', 'report.txt'), 'weekly numbers');
    const task = node('teamchat-notification', uid('nn'), '', { channel: '#general', message: 'Report', attachments: 'ref-workspace:report.txt' });
    await deploy((z, env) => oneShot(z, { ...task, z, environment: env }));
    fake.channelNames.set('general', 'C0GENERAL');
    await inject(task.id);
    should(await red.waitForLog(new RegExp(`(done|branch) ${task.id}`))).match(new RegExp(`done ${task.id}`));
    const post = fake.callsOf('chat.postMessage')[0];
    should([post.body.channel, post.result?.channel]).eql(['#general', 'C0GENERAL']);
    const complete = fake.callsOf('files.completeUploadExternal')[0];
    should([complete.body.channel_id, complete.result?.ok]).eql(['C0GENERAL', true]);
  });

  it("notification: typed Channel from msg and Message from global context; that message is the author's text, posted as is (not escaped)", async function () {
    const task = node('teamchat-notification', uid('nty'), '', { channel: 'target', channelType: 'msg', message: 'alert', messageType: 'global' });
    const setUp = 'global.set("alert", "<!here> deploy *{done}* <https://ci.example.com|log>"); msg.target = "C0TYPED"; return msg;';
    await deploy((z, env) => oneShot(z, { ...task, z, environment: env }).map((n) => (n.id === `fn${task.id}` ? { ...n, func: setUp } : n)), {
      defaultChannel: 'C0ALERTS',
    });
    await inject(task.id);
    await red.waitForLog(new RegExp(`done ${task.id}`));
    const post = fake.callsOf('chat.postMessage')[0].body;
    should([post.channel, post.text]).eql(['C0TYPED', '<!here> deploy *{done}* <https://ci.example.com|log>']);
    should((await statusOf(task.id)).text).equal('posted to C0TYPED');
  });

  it('notification: an empty Message read from msg stops with 3005; an empty Channel read from msg means the Default Channel', async function () {
    const empty = node('teamchat-notification', uid('nme'), '', { channel: 'C0X', message: 'missing', messageType: 'msg' });
    const fallback = node('teamchat-notification', uid('nmc'), '', { channel: 'nowhere', channelType: 'msg', message: 'text', messageType: 'msg' });
    const setUp = 'msg.text = "hello"; msg.nowhere = ""; return msg;';
    await deploy(
      (z, env) => [empty, fallback].flatMap((t) => oneShot(z, { ...t, z, environment: env }).map((n) => (n.id === `fn${t.id}` ? { ...n, func: setUp } : n))),
      { defaultChannel: 'C0ALERTS' },
    );
    await inject(empty.id);
    await red.waitForLog(new RegExp(`branch ${empty.id} 3005 Message is empty`));
    should(fake.callsOf('chat.postMessage').length).equal(0);
    await inject(fallback.id);
    await red.waitForLog(new RegExp(`done ${fallback.id}`));
    should(fake.callsOf('chat.postMessage').map((c) => [c.body.channel, c.body.text])).eql([['C0ALERTS', 'hello']]);
  });

  it('notification: a msg property that cannot be read, or a type no dialog offers, stops with 3005 and nothing is posted', async function () {
    const unreadable = node('teamchat-notification', uid('nur'), '', { channel: 'to[', channelType: 'msg', message: 'hi' });
    const unknown = node('teamchat-notification', uid('nun'), '', { channel: 'C0X', message: '42', messageType: 'num' });
    await deploy((z, env) => [unreadable, unknown].flatMap((t) => oneShot(z, { ...t, z, environment: env })), { defaultChannel: 'C0ALERTS' });
    await inject(unreadable.id);
    await red.waitForLog(new RegExp(`branch ${unreadable.id} 3005 Cannot read msg\\.to\\[`));
    await inject(unknown.id);
    await red.waitForLog(new RegExp(`branch ${unknown.id} 3005 Unknown field type "num"`));
    should(fake.callsOf('chat.postMessage').length).equal(0);
  });

  it('notification: no message or no channel stops with 3005; a missing files:write with 4008; nothing posted', async function () {
    const empty = node('teamchat-notification', uid('ne'), '', { channel: 'C0X', message: '{nothing}' });
    const nowhere = node('teamchat-notification', uid('nw'), '', { channel: '', message: 'hi' });
    const badFile = node('teamchat-notification', uid('nb'), '', { channel: 'C0X', message: 'hi', attachments: 'ref-workspace:missing.pdf' });
    const noScope = node('teamchat-notification', uid('ns'), '', { channel: 'C0X', message: 'hi', attachments: 'ref-workspace:report.txt' });
    mkdirSync(join(red.userDir, 'channel-sessions', 'workspace'), { recursive: true });
    writeFileSync(join(red.userDir, 'channel-sessions', 'workspace', 'report.txt'), 'numbers');
    await deploy((z, env) => [empty, nowhere, badFile, noScope].flatMap((t) => oneShot(z, { ...t, z, environment: env })));
    fake.scopes = 'chat:write';
    await inject(empty.id);
    await red.waitForLog(new RegExp(`branch ${empty.id} 3005 Message is empty`));
    await inject(nowhere.id);
    await red.waitForLog(new RegExp(`branch ${nowhere.id} 3005 No Channel`));
    await inject(badFile.id);
    await red.waitForLog(new RegExp(`branch ${badFile.id} 3005 Attachments`));
    await inject(noScope.id);
    await red.waitForLog(new RegExp(`branch ${noScope.id} 4008 .*files:write`));
    should(fake.callsOf('chat.postMessage').length).equal(0);
  });

  it('notification: when the message went out but the files failed, the error says so (4001)', async function () {
    mkdirSync(join(red.userDir, 'channel-sessions', 'workspace'), { recursive: true });
    writeFileSync(join(red.userDir, 'channel-sessions', 'workspace', 'report.txt'), 'numbers');
    const task = node('teamchat-notification', uid('nx'), '', { channel: 'C0X', message: 'hi', attachments: 'ref-workspace:report.txt' });
    await deploy((z, env) => oneShot(z, { ...task, z, environment: env }));
    fake.failures.set('files.getUploadURLExternal', 'ratelimited_upload');
    await inject(task.id);
    await red.waitForLog(new RegExp(`branch ${task.id} 4001 The message was posted, but the files failed: .*ratelimited_upload`));
    should(fake.callsOf('chat.postMessage').length).equal(1);
  });

  it('notification: a missing Bot Token stops it with 4008; in a Session it is not threaded nor in the history', async function () {
    const task = node('teamchat-notification', uid('nm'), '', { channel: 'C0X', message: 'hi' });
    await deploy((z, env) => oneShot(z, { ...task, z, environment: env }), {}, { botToken: '' });
    await inject(task.id);
    await red.waitForLog(new RegExp(`branch ${task.id} 4008 .*no Bot Token`));
    const z0 = uid('z');
    await deploy((z, env) => [
      node('teamchat-start', `st${z0}`, z, { environment: env }, [[`nt${z0}`]]),
      node('teamchat-notification', `nt${z0}`, z, { environment: env, channel: 'C0OPS', message: 'New chat from {teamchat.from}' }, [[`in${z0}`], []]),
      node('input-task', `in${z0}`, z, { prompt: '', resultVariable: 'answer' }, [[], []]),
    ]);
    await slack.post(slack.envelope(slack.direct('U7', 'hello')));
    const post = await eventually(() => fake.callsOf('chat.postMessage')[0]);
    should([post.body.channel, post.body.text, post.body.thread_ts]).eql(['C0OPS', 'New chat from U7', undefined]);
    const list = (await red.admin('GET', `/channel-sessions/sessions?environment=${envId}`)).body;
    const s = await eventually(async () => ((await session(list[0].id)).state === 'waiting' ? session(list[0].id) : undefined));
    should(s.history.map((h: any) => h.text)).eql(['hello']);
  });

  it('retired teamchat-post-message: loads, warns on deploy to use TeamChatNotification, never posts', async function () {
    const old = node('teamchat-post-message', uid('old'), '', { environment: '', channel: 'C0X', message: 'hi' });
    await deploy((z, env) => [
      node('inject', `inj${old.id}`, z, { props: [{ p: 'payload' }], payload: 'x', payloadType: 'str' }, [[old.id]]),
      { ...old, z, environment: env, wires: [] },
    ]);
    await red.waitForLog(/retired and posts nothing: replace it with a TeamChatNotification/);
    should(await statusOf(old.id)).eql({ text: 'retired: replace with TeamChatNotification', fill: 'red', shape: 'ring' });
    await inject(old.id);
    await red.waitForLog(new RegExp(`teamchat-post-message:${old.id}\\].*TeamChatPostMessage`, 's'));
    should(fake.callsOf('chat.postMessage').length).equal(0);
  });

  // ---- Environment and start endpoint ------------------------------------------------------------

  it('logs the event URL and start URL on deploy with the public base URL', async function () {
    await deploy(() => [], { publicBaseUrl: 'https://bots.example.com/' });
    await red.waitForLog(new RegExp(`Event URL: https://bots\\.example\\.com/TeamChat/event/${token}`));
    await red.waitForLog(new RegExp(`Start URL: https://bots\\.example\\.com/TeamChat/start/${token}`));
  });

  it('start endpoint: 401 / 400 / 404, then 202 {sessionId}, then 200 existing for the same conversation', async function () {
    const z0 = uid('z');
    await deploy((z, env) => [
      node('teamchat-start', `st${z0}`, z, { environment: env }, [[`out${z0}`]]),
      node('output-task', `out${z0}`, z, { text: 'Started: {teamchat.text}' }, [[`in${z0}`], []]),
      node('input-task', `in${z0}`, z, { prompt: '', resultVariable: 'answer' }, [[], []]),
    ]);
    const url = `/TeamChat/start/${token}`;
    const good = { Authorization: `Bearer ${SIGNING_SECRET}` };
    const body = { channel: 'C0SUPPORT', user: 'U5', initialMessage: 'Follow up on <!here> ticket', threadTs: '1710000000.000900' };
    should((await red.request('POST', url, body, { Authorization: 'Bearer wrong' })).status).equal(401);
    should((await red.request('POST', url, body)).status).equal(401);
    should((await red.request('POST', `/TeamChat/start/nope`, body, good)).status).equal(404);
    should((await red.request('POST', url, { user: 'U5' }, good)).status).equal(400);
    should((await red.request('POST', url, '{broken', { ...good, 'Content-Type': 'application/json' })).status).equal(400);
    should(fake.callsOf('chat.postMessage').length).equal(0);
    const started = await red.request('POST', url, body, good);
    should(started.status).equal(202, started.text);
    should(started.body.sessionId).match(/^[0-9a-f]{24}$/);
    const post = await eventually(() => fake.callsOf('chat.postMessage')[0]);
    should([post.body.channel, post.body.thread_ts, post.body.text]).eql(['C0SUPPORT', body.threadTs, 'Started: Follow up on &lt;!here&gt; ticket']);
    const s = await eventually(async () => ((await session(started.body.sessionId)).state === 'waiting' ? session(started.body.sessionId) : undefined));
    should(s.vars.teamchat.from).equal('U5');
    should(s.vars.teamchat.thread).equal(body.threadTs);
    const again = await red.request('POST', url, body, good);
    should([again.status, again.body]).eql([200, { sessionId: started.body.sessionId, existing: true }]);
    should(fake.callsOf('chat.postMessage').length).equal(1, 'the second request did nothing');
  });

  it('start endpoint without a thread: the first post opens the thread, and replies in it continue the Session', async function () {
    const z0 = uid('z');
    await deploy((z, env) => [
      node('teamchat-start', `st${z0}`, z, { environment: env }, [[`out${z0}`]]),
      node('output-task', `out${z0}`, z, { text: 'Your order shipped. Any questions?' }, [[`in${z0}`], []]),
      node('input-task', `in${z0}`, z, { prompt: 'Reply in this thread.', resultVariable: 'answer' }, [[`end${z0}`], []]),
      node('end-task', `end${z0}`, z, {}),
    ]);
    const started = await red.request('POST', `/TeamChat/start/${token}`, { channel: 'C0ORDERS', user: 'U5' }, { Authorization: `Bearer ${SIGNING_SECRET}` });
    should(started.status).equal(202, started.text);
    await eventually(() => fake.callsOf('chat.postMessage').length === 2);
    const [first, prompt] = fake.callsOf('chat.postMessage');
    should(first.body.thread_ts).equal(undefined);
    const firstTs = prompt.body.thread_ts;
    should(firstTs).match(/^\d+\.\d+$/, 'the prompt went into the thread of the first post');
    await slack.post(slack.envelope(slack.channel('C0ORDERS', 'U5', 'when will it arrive?', { thread_ts: firstTs })));
    const done = await eventually(async () => ((await session(started.body.sessionId)).state === 'completed' ? session(started.body.sessionId) : undefined));
    should(done.vars.answer).equal('when will it arrive?');
  });
});
