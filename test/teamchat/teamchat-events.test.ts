import should from 'should';
import { tab, uid } from '../harness/flows';
import { NodeRed, eventually } from '../harness/node-red';
import { FakeSlack } from '../fakes/slack-api';
import { SlackEvents } from '../fakes/slack-events';
import { SIGNING_SECRET, helpDesk, teamchatEnvironment } from '../fakes/slack-flows';

/** The event URL: signatures, acknowledgement, which messages start or continue Sessions. */
describe('team chat: event URL', function () {
  let red: NodeRed;
  let fake: FakeSlack;
  let slack: SlackEvents;
  let envId: string;
  let ids: { start: string; hello: string; ask: string; reply: string; end: string };

  before(async function () {
    fake = await FakeSlack.start();
    red = await NodeRed.start();
  });
  after(async function () {
    await red?.close();
    await fake?.close();
  });

  async function deploy(props: Record<string, unknown> = {}, flowProps: Parameters<typeof helpDesk>[3] = {}) {
    fake.reset();
    const z = uid('tab');
    envId = uid('env');
    const token = `tok${uid('t')}AAAAAAAAAAAAAAAAAAAA`;
    ids = { start: uid('s'), hello: uid('h'), ask: uid('a'), reply: uid('r'), end: uid('e') };
    await red.deploy([tab(z, 'Help desk'), teamchatEnvironment(envId, token, fake, props), ...helpDesk(z, envId, ids, flowProps)]);
    slack = new SlackEvents(red, token, SIGNING_SECRET, fake.team);
  }

  async function sessions(): Promise<any[]> {
    const res = await red.admin('GET', `/channel-sessions/sessions?environment=${envId}&ended=true`);
    return res.body;
  }

  async function session(id: string): Promise<any> {
    return (await red.admin('GET', `/channel-sessions/sessions/${id}`)).body;
  }

  async function sessionCount(n: number): Promise<any[]> {
    return eventually(
      async () => {
        const list = await sessions();
        return list.length === n ? list : undefined;
      },
      5000,
      `${n} Session(s)`,
    );
  }

  /** Sends an event and waits until the Session(s) have taken it (posted messages are the sign). */
  async function send(event: Record<string, unknown>, options: Parameters<SlackEvents['post']>[1] = {}) {
    const res = await slack.post(slack.envelope(event), options);
    should(res.status).equal(200, res.text);
    return res;
  }

  /** Proves a message was ignored: a later message in the same test is handled, and the ignored one left no trace. */
  async function settled(): Promise<void> {
    const before = fake.calls.length;
    await send(slack.direct('UFLUSH', 'flush'), {});
    await eventually(
      () => fake.calls.length > before && fake.callsOf('chat.postMessage').some((c) => c.body.text.includes('flush')),
      5000,
      'the flush message',
    );
  }

  beforeEach(async () => deploy());

  it('answers url_verification with the challenge, signed', async function () {
    const res = await slack.post({ token: 'x', challenge: 'fake-url-verification-challenge', type: 'url_verification' });
    should(res.status).equal(200);
    should(res.body).eql({ challenge: 'fake-url-verification-challenge' });
  });

  it('logs the event URL and start URL paths on deploy when no public base URL is set', async function () {
    await red.waitForLog(new RegExp(`Event URL: /TeamChat/event/${slack.token} \\(set the Public base URL`));
    await red.waitForLog(new RegExp(`Start URL: /TeamChat/start/${slack.token} \\(set the Public base URL`));
    should(red.logs.some((l) => l.includes(fake.botToken) || l.includes(SIGNING_SECRET))).be.false('no secret in the log');
  });

  it('refuses a wrong, stale, future or missing signature with 401 and starts nothing', async function () {
    const body = slack.envelope(slack.direct('U1', 'hello'));
    const now = Math.floor(Date.now() / 1000);
    should((await slack.post(body, { secret: 'not-the-secret' })).status).equal(401);
    // The route reads its clock when the request arrives, later than `now`: a stale timestamp only
    // gets staler, but one 301 s ahead is 300 s ahead (inside the window) once the second turns
    // on the way. A minute past the window holds however slow the machine; the exact edges (300
    // in, 301 out, either way) are checked with a given clock in teamchat-signature.test.ts.
    should((await slack.post(body, { timestamp: now - 301 })).status).equal(401);
    should((await slack.post(body, { timestamp: Math.floor(Date.now() / 1000) + 360 })).status).equal(401);
    should((await slack.post(body, { signature: '' })).status).equal(401);
    const challenge = await slack.post({ type: 'url_verification', challenge: 'c' }, { secret: 'wrong' });
    should(challenge.status).equal(401);
    should(challenge.text).equal('');
    await settled();
    const list = await sessions();
    should(list.length).equal(1, 'only the flush message started a Session');
    should(fake.callsOf('chat.postMessage').some((c) => c.body.text.includes('hello'))).be.false();
  });

  it('accepts a signature made 4 minutes ago (inside the 5-minute window)', async function () {
    const res = await slack.post(slack.envelope(slack.direct('U1', 'late but fine')), { timestamp: Math.floor(Date.now() / 1000) - 240 });
    should(res.status).equal(200);
    await sessionCount(1);
  });

  it('answers 404 to an unknown token and 400 to a signed body that is not JSON', async function () {
    const unknown = await slack.post(slack.envelope(slack.direct('U1', 'hi')), { token: 'no-such-token' });
    should(unknown.status).equal(404);
    const malformed = await slack.post(undefined, { raw: '{"type":"event_callback",' });
    should(malformed.status).equal(400);
    should((await sessions()).length).equal(0);
  });

  it('acknowledges at once and handles the event after the response', async function () {
    const release = fake.hold('chat.postMessage');
    try {
      const res = await send(slack.direct('U1', 'hello'));
      should(res.status).equal(200);
      should(res.text).equal('');
      // The reply is still held at Slack's side while the acknowledgement has already come back.
      await eventually(() => fake.callsOf('chat.postMessage').length === 1, 5000, 'the reply to be under way');
    } finally {
      release();
    }
    const [s] = await sessionCount(1);
    await eventually(async () => (await session(s.id)).state === 'waiting', 5000, 'the Session to wait');
  });

  it("acknowledges at once while auth.test is held; the message is handled once after it answers, and the app's own message still answers nothing", async function () {
    const release = fake.hold('auth.test');
    let released = false;
    const hold = new Promise<void>((resolve) =>
      setTimeout(() => {
        released = true;
        release();
        resolve();
      }, 5000),
    );
    const first = slack.direct('U1', 'hi');
    try {
      await send(first);
      should(released).be.false('the event was acknowledged before auth.test answered');
      // Its bot user's own message (no bot_id) in the same conversation, recorded before the app knows who it is.
      await send(slack.direct(fake.botUserId, 'my own words', { thread_ts: first.ts }));
      should(released).be.false('the own message was acknowledged before auth.test answered');
      await eventually(() => fake.callsOf('auth.test').length === 1, 5000, 'auth.test to be asked');
      should(fake.callsOf('chat.postMessage')).be.empty();
    } finally {
      await hold;
    }
    const [s] = await sessionCount(1);
    await eventually(async () => (await session(s.id)).state === 'waiting', 5000, 'the Session to wait');
    await send(slack.direct('U1', 'bye', { thread_ts: first.ts }));
    const done = await eventually(async () => ((await session(s.id)).state === 'completed' ? session(s.id) : undefined), 5000, 'the Session to complete');
    should(done.vars.answer).equal('bye', "the app's own message did not answer the InputTask");
    should(fake.callsOf('chat.postMessage').map((c) => c.body.text)).eql(['Hello : hi', 'What else?', 'Got bye']);
    should(await sessions()).have.length(1);
  });

  it('starts a Session from a direct message with every {teamchat} field and replies in its thread', async function () {
    fake.users.U1 = { name: 'ada', real_name: 'Ada Lovelace', display_name: 'Ada' };
    const event = slack.direct('U1', 'I need help &amp; a &lt;b&gt;');
    await send(event);
    const [s] = await sessionCount(1);
    const detail = await eventually(
      async () => {
        const d = await session(s.id);
        return d.state === 'waiting' ? d : undefined;
      },
      5000,
      'the Session to wait',
    );
    should({ ...detail.vars.teamchat, files: undefined }).eql({
      text: 'I need help & a <b>',
      files: undefined,
      from: 'U1',
      profileName: 'Ada',
      to: 'D0DIRECT1',
      team: fake.team,
      thread: event.ts,
      messageId: event.ts,
      channel: 'TeamChatChannel',
      isTest: false,
    });
    should(detail.vars.teamchat.files).eql({ count: 0, names: '' });
    should(detail.vars.execution.channelSender).equal('U1');
    should(detail.vars.execution.channel).equal('TeamChatChannel');
    should(detail.history[0].text).equal('I need help & a <b>');
    const posts = fake.callsOf('chat.postMessage');
    should(posts.map((p) => [p.body.channel, p.body.thread_ts, p.body.text])).eql([
      ['D0DIRECT1', event.ts, 'Hello Ada: I need help &amp; a &lt;b&gt;'],
      ['D0DIRECT1', event.ts, 'What else?'],
    ]);
    should(posts.every((p) => p.token === fake.botToken)).be.true();
    should(fake.callsOf('users.info').map((c) => c.body.user)).eql(['U1']);
  });

  it('leaves profileName empty and never calls users.info without the users:read scope', async function () {
    fake.scopes = 'chat:write,im:history';
    await deploy();
    fake.scopes = 'chat:write,im:history';
    fake.users.U2 = { name: 'bob', real_name: 'Bob', display_name: 'Bob' };
    await send(slack.direct('U2', 'hi'));
    const [s] = await sessionCount(1);
    const d = await eventually(async () => ((await session(s.id)).state === 'waiting' ? session(s.id) : undefined));
    should(d.vars.teamchat.profileName).equal('');
    should(fake.callsOf('users.info').length).equal(0);
  });

  it('strips the mention of the app from the text', async function () {
    await send(slack.mention(slack.channel('C0GENERAL', 'U1', '<@UBOT0001> reset my   password, thanks <@UBOT0001|helpdesk>!')));
    const [s] = await sessionCount(1);
    const d = await eventually(async () => ((await session(s.id)).state === 'waiting' ? session(s.id) : undefined));
    should(d.vars.teamchat.text).equal('reset my   password, thanks!');
    should(d.vars.teamchat.to).equal('C0GENERAL');
  });

  it("ignores bot messages, the app's own, edits, deletions, joins and other subtypes", async function () {
    const ts = slack.nextTs();
    const ignored = [
      slack.direct('U9', 'from a bot', { bot_id: 'BOTHER', subtype: 'bot_message' }),
      slack.direct('U9', 'bot without subtype', { bot_id: 'BOTHER' }),
      slack.direct(fake.botUserId, 'my own words'),
      {
        type: 'message',
        subtype: 'message_changed',
        hidden: true,
        channel: 'D0DIRECT1',
        channel_type: 'im',
        ts: slack.nextTs(),
        message: { user: 'U9', text: 'edited', ts },
      },
      { type: 'message', subtype: 'message_deleted', hidden: true, channel: 'D0DIRECT1', channel_type: 'im', ts: slack.nextTs(), deleted_ts: ts },
      slack.channel('C0GENERAL', 'U9', '<@U9> has joined the channel', { subtype: 'channel_join' }),
      slack.channel('C0GENERAL', 'U9', 'set the topic', { subtype: 'channel_topic' }),
      slack.direct('U9', 'edited in place', { edited: { user: 'U9', ts } }),
    ];
    await deploy({ startFromChannel: true });
    for (const event of ignored) await send(event);
    await settled();
    const list = await sessions();
    should(list.length).equal(1, `only the flush message started a Session: ${JSON.stringify(list.map((s) => s.conversation))}`);
  });

  it("takes a file_share message as a person's message", async function () {
    await send(slack.direct('U1', 'see attached', { subtype: 'file_share', files: [] }));
    const [s] = await sessionCount(1);
    const d = await eventually(async () => ((await session(s.id)).state === 'waiting' ? session(s.id) : undefined));
    should(d.vars.teamchat.text).equal('see attached');
  });

  it('ignores retries and repeated deliveries of a handled event', async function () {
    const body = slack.envelope(slack.direct('U1', 'only once'));
    should((await slack.post(body)).status).equal(200);
    await sessionCount(1);
    should((await slack.post(body, { retryNum: 1 })).status).equal(200);
    should((await slack.post(body, { retryNum: 2 })).status).equal(200);
    should((await slack.post(body)).status).equal(200);
    await settled();
    should((await sessions()).length).equal(2, 'the repeated event started nothing (the second Session is the flush)');
    should(fake.callsOf('chat.postMessage').filter((c) => c.body.text.includes('only once')).length).equal(1);
  });

  it('handles a retry whose first delivery never arrived', async function () {
    await send(slack.direct('U1', 'first try lost'), { retryNum: 1 });
    await sessionCount(1);
  });

  it('handles a mention once though it arrives as app_mention and as message, in either order', async function () {
    const first = slack.channel('C0GENERAL', 'U1', '<@UBOT0001> one');
    await send(slack.mention(first));
    await send(first);
    const second = slack.channel('C0GENERAL', 'U2', '<@UBOT0001> two');
    await send(second);
    await send(slack.mention(second));
    await settled();
    const list = await sessions();
    should(list.length).equal(3, JSON.stringify(list.map((s) => s.conversation)));
    const greetings = fake.callsOf('chat.postMessage').filter((c) => /one|two/.test(c.body.text));
    should(greetings.map((c) => c.body.text).sort()).eql(['Hello : one', 'Hello : two']);
  });

  it('Start-sessions-from: direct messages off ignores a new direct message', async function () {
    await deploy({ startFromDirect: false, startFromChannel: true });
    await send(slack.direct('U1', 'anyone?'));
    await send(slack.channel('C0GENERAL', 'U1', 'plain channel message'));
    await sessionCount(1);
    const [s] = await sessions();
    should(s.conversation.startsWith('C0GENERAL/')).equal(true);
  });

  it('Start-sessions-from: mentions off and channel messages off ignore both', async function () {
    await deploy({ startFromMention: false, startFromChannel: false });
    const m = slack.channel('C0GENERAL', 'U1', '<@UBOT0001> hi');
    await send(slack.mention(m));
    await send(m);
    await send(slack.channel('C0GENERAL', 'U1', 'no mention'));
    await settled();
    should((await sessions()).length).equal(1, 'only the flush direct message');
  });

  it('Start-sessions-from: a message in a live Session continues it whatever the settings', async function () {
    await deploy({ sessionMode: 'PerChannel', startFromChannel: false });
    await send(slack.mention(slack.channel('C0GENERAL', 'U1', '<@UBOT0001> start')));
    const [s] = await sessionCount(1);
    await eventually(async () => (await session(s.id)).state === 'waiting');
    await send(slack.channel('C0GENERAL', 'U3', 'no mention, still the Session'));
    const done = await eventually(
      async () => {
        const d = await session(s.id);
        return d.state === 'completed' ? d : undefined;
      },
      5000,
      'the Session to complete',
    );
    should(done.vars.answer).equal('no mention, still the Session');
    should(fake.callsOf('chat.postMessage').some((c) => c.body.text === 'Got no mention, still the Session')).be.true();
  });

  it('a thread reply that comes while the mention that starts its Session is still in its first step (users.info slow) continues that Session', async function () {
    fake.users.U1 = { name: 'ada', real_name: 'Ada Lovelace', display_name: 'Ada' };
    fake.inject('users.info', { holdMs: 1500 });
    const mention = slack.channel('C0GENERAL', 'U1', '<@UBOT0001> start');
    await send(slack.mention(mention));
    await new Promise((resolve) => setTimeout(resolve, 200));
    // Neither a mention nor a direct message, and channel messages start nothing: only a Session continues with it.
    await send(slack.channel('C0GENERAL', 'U1', 'said before the Session was live', { thread_ts: mention.ts }));
    should(fake.attemptsOf('users.info')).have.length(1);
    should(fake.callsOf('users.info')).have.length(0, 'the first step still waits for users.info when the reply is acknowledged');
    const [s] = await sessionCount(1);
    const done = await eventually(
      async () => {
        const d = await session(s.id);
        return d.state === 'completed' ? d : undefined;
      },
      10000,
      'the Session to complete with the reply',
    );
    should(done.vars.answer).equal('said before the Session was live');
    should(done.history.map((h: any) => [h.from, h.text])).eql([
      ['user', 'start'],
      ['bot', 'Hello Ada: start'],
      ['bot', 'What else?'],
      ['user', 'said before the Session was live'],
      ['bot', 'Got said before the Session was live'],
    ]);
  });

  it('PerThread: a top-level direct message starts a new Session; a reply in the thread continues', async function () {
    const first = slack.direct('U1', 'first');
    await send(first);
    const [s1] = await sessionCount(1);
    await eventually(async () => (await session(s1.id)).state === 'waiting');
    await send(slack.direct('U1', 'second, outside the thread'));
    await sessionCount(2);
    await send(slack.direct('U1', 'in the thread', { thread_ts: first.ts }));
    const done = await eventually(async () => ((await session(s1.id)).state === 'completed' ? session(s1.id) : undefined));
    should(done.vars.answer).equal('in the thread');
    should(fake.callsOf('chat.postMessage').find((c) => c.body.text === 'Got in the thread')?.body.thread_ts).equal(first.ts);
    should(fake.callsOf('auth.test').length).equal(1, 'what the token is (bot user, scopes) is learned once per Environment');
  });

  it('PerChannel: the next top-level direct message continues the Session', async function () {
    await deploy({ sessionMode: 'PerChannel' });
    await send(slack.direct('U1', 'first'));
    const [s] = await sessionCount(1);
    await eventually(async () => (await session(s.id)).state === 'waiting');
    await send(slack.direct('U1', 'second'));
    const done = await eventually(async () => ((await session(s.id)).state === 'completed' ? session(s.id) : undefined));
    should(done.vars.answer).equal('second');
    should((await sessions()).length).equal(1);
  });

  it('PerUserPerChannel: two users in one channel have two Sessions; each continues their own', async function () {
    await deploy({ sessionMode: 'PerUserPerChannel', startFromChannel: true });
    await send(slack.channel('C0GENERAL', 'U1', 'I am one'));
    await send(slack.channel('C0GENERAL', 'U2', 'I am two'));
    const list = await sessionCount(2);
    should(list.map((s) => s.conversation).sort()).eql(['C0GENERAL/U1', 'C0GENERAL/U2']);
    const one = list.find((s) => s.conversation === 'C0GENERAL/U1');
    await eventually(async () => (await session(one.id)).state === 'waiting');
    await send(slack.channel('C0GENERAL', 'U1', 'answer of one'));
    const done = await eventually(async () => ((await session(one.id)).state === 'completed' ? session(one.id) : undefined));
    should(done.vars.answer).equal('answer of one');
    should((await sessions()).length).equal(2);
  });

  it('handles private channels (message.groups) like public ones', async function () {
    await deploy({ startFromChannel: true });
    const event = slack.channel('G0PRIVATE', 'U1', 'secret question');
    should(event.channel_type).equal('group');
    await send(event);
    const [s] = await sessionCount(1);
    const d = await eventually(async () => ((await session(s.id)).state === 'waiting' ? session(s.id) : undefined));
    should(d.vars.teamchat.to).equal('G0PRIVATE');
    should(fake.callsOf('chat.postMessage')[0].body.channel).equal('G0PRIVATE');
  });

  it('a start that cannot run (no team-chat start) leaves the conversation free for the next message', async function () {
    fake.reset();
    const z = uid('tab');
    envId = uid('env');
    const token = `tok${uid('t')}DDDDDDDDDDDDDDDDDDDD`;
    const env = teamchatEnvironment(envId, token, fake, { sessionMode: 'PerChannel' });
    await red.deploy([tab(z, 'No start'), env]);
    slack = new SlackEvents(red, token, SIGNING_SECRET, fake.team);
    await send(slack.direct('U1', 'nobody home'));
    await red.waitForLog(/No Process has a start for Environment/);
    should((await sessions()).length).equal(0);
    ids = { start: uid('s'), hello: uid('h'), ask: uid('a'), reply: uid('r'), end: uid('e') };
    await red.deploy([tab(z, 'Now with a start'), env, ...helpDesk(z, envId, ids)]);
    await send(slack.direct('U1', 'hello again'));
    const [s] = await sessionCount(1);
    should(s.conversation).equal('D0DIRECT1');
  });

  it('a Process with the shared Start works on TeamChatChannel, without {teamchat}', async function () {
    fake.reset();
    const z = uid('tab');
    envId = uid('env');
    const token = `tok${uid('t')}EEEEEEEEEEEEEEEEEEEE`;
    ids = { start: uid('s'), hello: uid('h'), ask: uid('a'), reply: uid('r'), end: uid('e') };
    const flow = helpDesk(z, envId, ids, { hello: 'Hello from {execution.channel}, {execution.channelSender}' });
    flow[0] = { ...flow[0], type: 'session-start', teamchat: envId, voice: '', messaging: '', environment: undefined };
    await red.deploy([tab(z, 'Shared start'), teamchatEnvironment(envId, token, fake), ...flow]);
    slack = new SlackEvents(red, token, SIGNING_SECRET, fake.team);
    const event = slack.direct('U1', 'via the shared start');
    await send(event);
    const [s] = await sessionCount(1);
    const d = await eventually(async () => ((await session(s.id)).state === 'waiting' ? session(s.id) : undefined));
    should(d.vars.teamchat).equal(undefined);
    should(d.channel).equal('TeamChatChannel');
    const hello = fake.callsOf('chat.postMessage')[0].body;
    should([hello.text, hello.thread_ts]).eql(['Hello from TeamChatChannel, U1', event.ts]);
    should(d.history[0].text).equal('via the shared start');
  });

  it('useThreads off: replies go to the channel, not a thread', async function () {
    await deploy({ useThreads: false });
    await send(slack.direct('U1', 'no threads please'));
    await eventually(() => fake.callsOf('chat.postMessage').length === 2);
    should(fake.callsOf('chat.postMessage').every((c) => c.body.thread_ts === undefined)).be.true();
  });
});
