import should from 'should';
import { node, tab, uid, type FlowNode } from '../harness/flows';
import { eventually, NodeRed } from '../harness/node-red';
import { FakeSlack } from '../fakes/slack-api';
import { SlackEvents } from '../fakes/slack-events';
import { SIGNING_SECRET, helpDesk, teamchatEnvironment } from '../fakes/slack-flows';

/**
 * An `http in` route that feeds a Message first node: the JSON body's `user`, `channel`, `vars`
 * and `text` become msg.user, msg.channel, msg.vars and msg.payload; output 2 writes
 * `OUT2 <p> <msg.error>` to the log. Output 1: Output (greeting) -> Input {answer} -> Output -> End;
 * with `pauseMs`, a delay between the greeting and the Input (the first step still runs meanwhile);
 * with `blocks`, the greeting is a Block message in the conversation; `open`, the Message first's own fields.
 */
function checkIn(
  z: string,
  p: string,
  path: string,
  environment: string,
  options: { pauseMs?: number; blocks?: boolean; open?: Record<string, unknown> } = {},
): FlowNode[] {
  const { pauseMs = 0 } = options;
  const afterHello = pauseMs ? `${p}Pause` : `${p}Ask`;
  const greeting = { text: 'Hi <@{teamchat.from}>, {teamchat.text} ({week})' };
  const card = {
    environment,
    channel: '',
    channelType: 'str',
    notificationText: 'Hi',
    blocks: JSON.stringify([{ type: 'section', text: { type: 'mrkdwn', text: '{teamchat.text}' } }]),
  };
  return [
    node('http in', `${p}In`, z, { url: path, method: 'post' }, [[`${p}Set`, `${p}Ok`]]),
    node('http response', `${p}Ok`, z, { statusCode: '202' }),
    node(
      'change',
      `${p}Set`,
      z,
      {
        rules: [
          { t: 'set', p: 'user', pt: 'msg', to: 'payload.user', tot: 'msg' },
          { t: 'set', p: 'channel', pt: 'msg', to: 'payload.channel', tot: 'msg' },
          { t: 'set', p: 'vars', pt: 'msg', to: 'payload.vars', tot: 'msg' },
          { t: 'set', p: 'payload', pt: 'msg', to: 'payload.text', tot: 'msg' },
          { t: 'delete', p: 'req', pt: 'msg' },
          { t: 'delete', p: 'res', pt: 'msg' },
        ],
      },
      [[`${p}Open`]],
    ),
    node('teamchat-open', `${p}Open`, z, { environment, ...options.open }, [[`${p}Hello`], [`${p}Err`]]),
    node('function', `${p}Err`, z, { func: `node.warn('OUT2 ${p} ' + JSON.stringify(msg.error)); return null;`, outputs: 1 }, [[]]),
    node(options.blocks ? 'teamchat-block-message' : 'output-task', `${p}Hello`, z, options.blocks ? card : greeting, [[afterHello], []]),
    ...(pauseMs
      ? [node('delay', `${p}Pause`, z, { pauseType: 'delay', timeout: String(pauseMs), timeoutUnits: 'milliseconds', drop: false, outputs: 1 }, [[`${p}Ask`]])]
      : []),
    node('input-task', `${p}Ask`, z, { prompt: '', resultVariable: 'answer' }, [[`${p}Got`], []]),
    node('output-task', `${p}Got`, z, { text: 'Got {answer}' }, [[`${p}End`], []]),
    node('end-task', `${p}End`, z),
  ];
}

/** Message first (teamchat-open): a Session toward a person on Slack, continued by their reply. */
describe('Message first (teamchat-open)', function () {
  let red: NodeRed;
  let fake: FakeSlack;
  let threaded: SlackEvents;
  let flat: SlackEvents;
  let paused: SlackEvents;
  const tokens = { t: 'tok-mf-t-' + uid(), c: 'tok-mf-c-' + uid(), u: 'tok-mf-u-' + uid(), p: 'tok-mf-p-' + uid() };
  const paths = { t: '/' + uid('mft'), c: '/' + uid('mfc'), u: '/' + uid('mfu'), p: '/' + uid('mfp'), b: '/' + uid('mfb'), f: '/' + uid('mff') };

  async function open(path: string, body: Record<string, unknown>): Promise<void> {
    const res = await red.request('POST', path, JSON.stringify(body), { 'Content-Type': 'application/json' });
    should(res.status).eql(202);
  }

  const out2 = (p: string) => red.logs.filter((l) => l.includes(`OUT2 ${p} `));

  async function sessionsOf(environment: string): Promise<any[]> {
    const res = await red.admin('GET', `/channel-sessions/sessions?environment=${environment}&ended=true`);
    return Promise.all((res.body as any[]).map(async (s) => (await red.admin('GET', `/channel-sessions/sessions/${s.id}`)).body));
  }

  const posts = (channel: string) => fake.calls.filter((c) => c.method === 'chat.postMessage' && c.body.channel === channel);

  before(async function () {
    fake = await FakeSlack.start();
    fake.users = {
      U0ANN: { name: 'ann', real_name: 'Ann', display_name: 'ann' },
      U0BOB: { name: 'bob', real_name: 'Bob', display_name: 'bob' },
      U0CY: { name: 'cy', real_name: 'Cy', display_name: 'cy' },
      U0DEE: { name: 'dee', real_name: 'Dee', display_name: 'dee' },
      U0EVE: { name: 'eve', real_name: 'Eve', display_name: 'eve' },
      U0FAY: { name: 'fay', real_name: 'Fay', display_name: 'fay' },
    };
    fake.channelNames.set('general', 'C0GENERAL');
    red = await NodeRed.start();
    threaded = new SlackEvents(red, tokens.t, SIGNING_SECRET);
    flat = new SlackEvents(red, tokens.c, SIGNING_SECRET);
    paused = new SlackEvents(red, tokens.p, SIGNING_SECRET);
    const z = uid('tab');
    const y = uid('tab');
    const x = uid('tab');
    const w = uid('tab');
    const v = uid('tab');
    const u = uid('tab');
    await red.deploy([
      teamchatEnvironment('mfEnvT', tokens.t, fake),
      teamchatEnvironment('mfEnvC', tokens.c, fake, { sessionMode: 'PerChannel', useThreads: false }),
      tab(z, 'Check-in, threads'),
      ...checkIn(z, 't', paths.t, 'mfEnvT'),
      tab(y, 'Check-in, no threads'),
      ...checkIn(y, 'c', paths.c, 'mfEnvC'),
      // An API URL without its scheme, as a flow deployed past the editor's check may have it.
      teamchatEnvironment('mfEnvU', tokens.u, fake, { apiUrl: 'localhost:3000' }),
      tab(x, 'Check-in, unusable API URL'),
      ...checkIn(x, 'u', paths.u, 'mfEnvU'),
      // A team-chat start as well: a direct message with no Session in its conversation opens one.
      teamchatEnvironment('mfEnvP', tokens.p, fake),
      tab(w, 'Check-in, first step paused'),
      ...checkIn(w, 'p', paths.p, 'mfEnvP', { pauseMs: 2000 }),
      ...helpDesk(w, 'mfEnvP', { start: 'pStart', hello: 'pStartHello', ask: 'pStartAsk', reply: 'pStartGot', end: 'pStartEnd' }),
      tab(v, 'Check-in with a card'),
      ...checkIn(v, 'b', paths.b, 'mfEnvP', { blocks: true }),
      // The user typed in as text with a placeholder of msg.vars, as the edit dialog accepts it.
      tab(u, 'Check-in, typed user'),
      ...checkIn(u, 'f', paths.f, 'mfEnvC', { open: { user: '{person.slack}', userType: 'str', channel: '', channelType: 'str' } }),
    ]);
  });
  after(async function () {
    await red?.close();
    await fake?.close();
  });

  it('opens a direct message, posts the first message as the thread and continues the Session with the reply in it', async function () {
    await open(paths.t, { user: 'U0ANN', text: 'how was the week?', vars: { week: 47 } });
    const first = await eventually(() => posts('D0ANN')[0], 5000, 'the first post');
    should(fake.calls.find((c) => c.method === 'conversations.open')?.body.users).eql('U0ANN');
    should(first.body.text).eql('Hi <@U0ANN>, how was the week? (47)');
    should(first.body.thread_ts).be.undefined();
    const ts = first.result?.ts as string;
    const waiting = await eventually(async () => (await sessionsOf('mfEnvT')).find((s) => s.waitingAt?.nodeId === 'tAsk'), 5000, 'the Session to wait');
    should(waiting.vars.teamchat).match({ from: 'U0ANN', to: 'D0ANN', direction: 'outbound', channel: 'TeamChatChannel' });
    should(waiting.vars.week).eql(47);

    const reply = threaded.direct('U0ANN', 'fine, thanks', { channel: 'D0ANN', thread_ts: ts });
    should((await threaded.post(threaded.envelope(reply))).status).eql(200);
    const got = await eventually(() => posts('D0ANN')[1], 5000, 'the answer in the thread');
    should(got.body).match({ text: 'Got fine, thanks', thread_ts: ts });
    const done = await eventually(async () => (await sessionsOf('mfEnvT')).find((s) => s.id === waiting.id && s.state === 'completed'), 5000, 'completed');
    should(done.history.map((h: any) => [h.from, h.text])).eql([
      ['bot', 'Hi <@U0ANN>, how was the week? (47)'],
      ['user', 'fine, thanks'],
      ['bot', 'Got fine, thanks'],
    ]);
  });

  it('continues the Session with a reply in its new thread that comes while the first step still runs, and opens no other', async function () {
    await open(paths.p, { user: 'U0DEE', text: 'quick one' });
    const first = await eventually(() => posts('D0DEE')[0], 5000, 'the first post');
    const ts = first.result?.ts as string;
    // The step that posted it is still in the delay: the Session is not stored under the thread's key yet.
    should((await sessionsOf('mfEnvP')).some((s) => s.state === 'waiting')).be.false();
    const reply = paused.direct('U0DEE', 'right away', { channel: 'D0DEE', thread_ts: ts });
    should((await paused.post(paused.envelope(reply))).status).eql(200);
    const got = await eventually(() => posts('D0DEE')[1], 8000, 'the answer in the thread');
    should(got.body).match({ text: 'Got right away', thread_ts: ts });
    const done = await eventually(async () => (await sessionsOf('mfEnvP')).find((s) => s.state === 'completed'), 5000, 'completed');
    should(done.vars.answer).eql('right away');
    should(done.history.map((h: any) => [h.from, h.text])).eql([
      ['bot', 'Hi <@U0DEE>, quick one ()'],
      ['user', 'right away'],
      ['bot', 'Got right away'],
    ]);
    should((await sessionsOf('mfEnvP')).map((s) => s.id)).eql([done.id], 'one Session for U0DEE, none opened at the team-chat start');
    should(posts('D0DEE').map((c) => c.body.text)).eql(['Hi <@U0DEE>, quick one ()', 'Got right away']);
  });

  it('a Block message as the first post opens the thread, and the reply in it continues the Session, opening no other', async function () {
    await open(paths.b, { user: 'U0EVE', text: 'approve the trip?' });
    const card = await eventually(() => posts('D0EVE')[0], 5000, 'the block message');
    should(card.body.blocks).eql([{ type: 'section', text: { type: 'mrkdwn', text: 'approve the trip?' } }]);
    should(card.body.thread_ts).be.undefined();
    const ts = card.result?.ts as string;
    const waiting = await eventually(async () => (await sessionsOf('mfEnvP')).find((s) => s.waitingAt?.nodeId === 'bAsk'), 5000, 'the Session to wait');
    const reply = paused.direct('U0EVE', 'approved', { channel: 'D0EVE', thread_ts: ts });
    should((await paused.post(paused.envelope(reply))).status).eql(200);
    const got = await eventually(() => posts('D0EVE')[1], 5000, 'the answer in the thread');
    should(got.body).match({ text: 'Got approved', thread_ts: ts });
    const done = await eventually(async () => (await sessionsOf('mfEnvP')).find((s) => s.id === waiting.id && s.state === 'completed'), 5000, 'completed');
    should(done.vars.answer).eql('approved');
    should((await sessionsOf('mfEnvP')).filter((s) => s.vars.teamchat?.from === 'U0EVE').map((s) => s.id)).eql(
      [done.id],
      'no Session opened at the team-chat start',
    );
    should(posts('D0EVE').map((c) => c.body.text)).eql(['Hi', 'Got approved']);
  });

  it('without threads, posts in the direct message and the reply there continues it; a second Message first to that user gets 4030 naming the Session', async function () {
    await open(paths.c, { user: 'U0BOB', text: 'ping' });
    const first = await eventually(() => posts('D0BOB')[0], 5000, 'the first post');
    should(first.body.thread_ts).be.undefined();
    const waiting = await eventually(async () => (await sessionsOf('mfEnvC')).find((s) => s.waitingAt?.nodeId === 'cAsk'), 5000, 'the wait');

    await open(paths.c, { user: 'U0BOB', text: 'ping again' });
    const busy = await eventually(() => out2('c')[0], 5000, 'the 4030');
    should(busy)
      .match(/"code":4030/)
      .and.containEql(waiting.id);
    should(posts('D0BOB')).have.length(1);

    await flat.post(flat.envelope(flat.direct('U0BOB', 'pong', { channel: 'D0BOB' })));
    const got = await eventually(() => posts('D0BOB')[1], 5000, 'the answer');
    should(got.body.text).eql('Got pong');
    should(got.body.thread_ts).be.undefined();
  });

  it('resolves placeholders of msg.vars in a user typed in as text, as the edit dialog accepts them', async function () {
    await open(paths.f, { vars: { person: { slack: 'U0FAY' } }, text: 'hello' });
    const first = await eventually(() => posts('D0FAY')[0] ?? out2('f')[0], 5000, 'the first post');
    should(first).have.property('body');
    should(fake.calls.filter((c) => c.method === 'conversations.open').map((c) => c.body.users)).containEql('U0FAY');
  });

  it('posts in the channel given, without conversations.open', async function () {
    const opens = fake.calls.filter((c) => c.method === 'conversations.open').length;
    await open(paths.c, { channel: 'C0TEAM01', text: 'stand-up' });
    const first = await eventually(() => posts('C0TEAM01')[0], 5000, 'the post in the channel');
    should(first.body.text).eql('Hi <@>, stand-up ()');
    should(fake.calls.filter((c) => c.method === 'conversations.open')).have.length(opens);
  });

  it('posts in a channel given by name; the Session takes the id the post answered, and the reply in its new thread continues it', async function () {
    await open(paths.t, { channel: 'general', text: 'stand-up' });
    const first = await eventually(() => posts('general')[0], 5000, 'the post in the channel');
    should(first.result).match({ channel: 'C0GENERAL' });
    const ts = first.result?.ts as string;
    const waiting = await eventually(
      async () => (await sessionsOf('mfEnvT')).find((s) => s.waitingAt?.nodeId === 'tAsk' && s.vars.teamchat.to === 'general'),
      5000,
      'the Session to wait',
    );
    const reply = threaded.channel('C0GENERAL', 'U0CY', 'all good', { thread_ts: ts });
    should((await threaded.post(threaded.envelope(reply))).status).eql(200);
    const got = await eventually(() => posts('C0GENERAL')[0], 5000, 'the answer in the thread');
    should(got.body).match({ text: 'Got all good', thread_ts: ts });
    const done = await eventually(async () => (await sessionsOf('mfEnvT')).find((s) => s.id === waiting.id && s.state === 'completed'), 5000, 'completed');
    should(done.vars.answer).eql('all good');
  });

  it('refuses a channel given by name with 3005 where Sessions are keyed by the channel from the start (PerChannel), nothing posted', async function () {
    const seen = out2('c').length;
    const before = fake.callsOf('chat.postMessage').length;
    await open(paths.c, { channel: '#general', text: 'stand-up' });
    should(await eventually(() => out2('c')[seen], 5000, 'the 3005')).match(
      /"code":3005.*channel \(msg\.channel\) is \\"#general\\", not a conversation id: in the Session Mode PerChannel .*an id is needed \(C…, G…, D…\), or a user id \(U…, W…\) in user \(msg\.user\)/,
    );
    should(fake.callsOf('chat.postMessage')).have.length(before);
  });

  it("refuses with 4008 naming the API URL when the Environment's is not an http(s) URL with a host, nothing posted, no Session", async function () {
    const before = fake.calls.length;
    await open(paths.u, { user: 'U0CY', text: 'hi' });
    should(await eventually(() => out2('u')[0], 5000, 'the 4008')).match(
      /"code":4008.*"message":"The API URL \\"localhost:3000\\" of the team-chat Environment \\"Env mfEnvU\\" is not a URL with http:\/\/ or https:\/\/ and a host/,
    );
    should(fake.calls).have.length(before);
    should(await sessionsOf('mfEnvU')).have.length(0);
  });

  it('refuses an unknown user id with 4001 (user_not_found) and no user nor channel with 3005, nothing posted', async function () {
    const before = fake.calls.filter((c) => c.method === 'chat.postMessage').length;
    const seen = out2('t').length;
    await open(paths.t, { user: 'U0NOBODY' });
    should(await eventually(() => out2('t')[seen], 5000, 'the 4001')).match(/"code":4001.*U0NOBODY.*user_not_found/);
    await open(paths.t, {});
    should(await eventually(() => out2('t')[seen + 1], 5000, 'the 3005')).match(/"code":3005.*user \(msg\.user\) and channel \(msg\.channel\) are both empty/);
    should(fake.calls.filter((c) => c.method === 'chat.postMessage')).have.length(before);
  });
});
