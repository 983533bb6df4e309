import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import should from 'should';
import { tab, uid } from '../harness/flows';
import { NodeRed, eventually } from '../harness/node-red';
import { FakeSlack } from '../fakes/slack-api';
import { SlackEvents } from '../fakes/slack-events';
import { SIGNING_SECRET, approvalDesk, teamchatEnvironment } from '../fakes/slack-flows';
import { SlackClicks, type ClickTarget } from '../fakes/slack-interactions';

const ENDED = 'This conversation has ended.';
const NOT_YOURS = 'This conversation belongs to someone else, so your choice was not used.';

/** Buttons and menus of a Block message answer the Session's waiting InputTask (interactivity URL). */
describe('team chat: buttons and menus that answer (interactivity URL)', function () {
  this.timeout(60000);
  let red: NodeRed;
  let fake: FakeSlack;
  let slack: SlackEvents;
  let clicks: SlackClicks;
  let envId: string;

  before(async () => {
    fake = await FakeSlack.start();
    red = await NodeRed.start();
  });
  after(async () => {
    await red?.close();
    await fake?.close();
  });

  async function deploy(props: Record<string, unknown> = {}, options: { loop?: boolean; channel?: string } = {}) {
    fake.reset();
    const z = uid('tab');
    envId = uid('env');
    const token = `tok${uid('i')}AAAAAAAAAAAAAAAAAAAA`;
    const ids = { start: uid('s'), blocks: uid('b'), ask: uid('a'), reply: uid('r'), end: uid('e') };
    await red.deploy([tab(z, 'Approvals'), teamchatEnvironment(envId, token, fake, props), ...approvalDesk(z, envId, ids, options)]);
    slack = new SlackEvents(red, token, SIGNING_SECRET, fake.team);
    clicks = new SlackClicks(red, token, SIGNING_SECRET, fake.origin, fake.team);
  }

  async function session(id: string): Promise<any> {
    return (await red.admin('GET', `/channel-sessions/sessions/${id}`)).body;
  }

  async function sessions(): Promise<any[]> {
    return (await red.admin('GET', `/channel-sessions/sessions?environment=${envId}&ended=true`)).body;
  }

  /** Starts a Session with `event` and waits until it waits at the InputTask below the buttons. */
  async function startWithButtons(event: Record<string, unknown>, user: string): Promise<{ id: string; at: Omit<ClickTarget, 'user'> & { user: string } }> {
    const before = fake.callsOf('chat.postMessage').length;
    const res = await slack.post(slack.envelope(event));
    should(res.status).equal(200);
    const post = await eventually(
      () =>
        fake
          .callsOf('chat.postMessage')
          .slice(before)
          .find((c) => c.body.blocks && c.result?.ts),
      5000,
      'the block message',
    );
    const s = await eventually(
      async () => (await sessions()).find((x) => x.state === 'waiting' && x.conversation.startsWith(String(event.channel))),
      5000,
      'the Session to wait',
    );
    return {
      id: s.id,
      // A click names the conversation by the id Slack answered the post with.
      at: { user, channel: post.result!.channel, messageTs: post.result!.ts, ...(post.body.thread_ts ? { threadTs: post.body.thread_ts } : {}) },
    };
  }

  function repliesSince(count: number): string[] {
    return fake
      .callsOf('chat.postMessage')
      .slice(count)
      .map((c) => c.body.text);
  }

  describe('in PerThread mode', () => {
    beforeEach(async () => deploy());

    it('a button click answers the InputTask: the Store variable gets its value, {decision_action} the fields', async () => {
      const started = await startWithButtons(slack.direct('U1', 'I need approval'), 'U1');
      const posts = fake.callsOf('chat.postMessage').length;
      const res = await clicks.post(clicks.button(started.at, { action_id: 'approve', block_id: 'decide', text: 'Approve', value: 'yes' }));
      should(res.status).equal(200);
      should(res.text).equal('');
      await eventually(() => repliesSince(posts).length === 1, 5000, 'the answer to be posted');
      should(repliesSince(posts)).deepEqual(['You chose yes (Approve via approve in decide, by U1)']);
      const done = await eventually(
        async () => {
          const d = await session(started.id);
          return d.state === 'completed' ? d : undefined;
        },
        5000,
        'the Session to complete',
      );
      should(done.vars.decision).equal('yes');
      should(done.vars.decision_action).deepEqual({ action_id: 'approve', block_id: 'decide', value: 'yes', text: 'Approve', user: 'U1' });
      should(fake.responses).be.empty();
      should(fake.callsOf('chat.postEphemeral')).be.empty();
    });

    it("a static select answers with the selected option's value and text", async () => {
      const started = await startWithButtons(slack.direct('U1', 'pick one'), 'U1');
      const posts = fake.callsOf('chat.postMessage').length;
      const res = await clicks.post(clicks.select(started.at, { action_id: 'priority', block_id: 'decide', text: 'High', value: 'high' }));
      should(res.status).equal(200);
      await eventually(() => repliesSince(posts).length === 1, 5000, 'the answer');
      should(repliesSince(posts)).deepEqual(['You chose high (High via priority in decide, by U1)']);
      const done = await session(started.id);
      should(done.vars.decision_action).deepEqual({ action_id: 'priority', block_id: 'decide', value: 'high', text: 'High', user: 'U1' });
      // The Sessions view shows the person's pick as they saw it, not its value.
      should(done.history.filter((h: any) => h.from === 'user').map((h: any) => h.text)).deepEqual(['pick one', 'High']);
    });

    it('a typed reply still answers, and leaves no {decision_action}', async () => {
      const started = await startWithButtons(slack.direct('U1', 'typed'), 'U1');
      const posts = fake.callsOf('chat.postMessage').length;
      await slack.post(slack.envelope(slack.direct('U1', 'maybe later', { thread_ts: started.at.threadTs })));
      await eventually(() => repliesSince(posts).length === 1, 5000, 'the answer');
      should(repliesSince(posts)).deepEqual(['You chose maybe later ( via  in , by )']);
      const done = await session(started.id);
      should(done.vars).not.have.property('decision_action');
    });

    it('a click after the Session ended runs nothing and tells the person, through the response_url', async () => {
      const started = await startWithButtons(slack.direct('U1', 'once'), 'U1');
      await clicks.post(clicks.button(started.at, { action_id: 'approve', block_id: 'decide', text: 'Approve', value: 'yes' }));
      await eventually(async () => (await session(started.id)).state === 'completed', 5000, 'the Session to complete');
      const posts = fake.callsOf('chat.postMessage').length;
      const again = await clicks.post(clicks.button(started.at, { action_id: 'reject', block_id: 'decide', text: 'Reject', value: 'no' }));
      should(again.status).equal(200);
      const [note] = await eventually(() => (fake.responses.length ? fake.responses : undefined), 5000, 'the ephemeral note');
      should(note.body).deepEqual({ response_type: 'ephemeral', replace_original: false, text: ENDED });
      should(note.token).equal('', 'a response_url gets no token');
      should(repliesSince(posts)).be.empty();
      should((await sessions()).filter((s) => s.state !== 'completed')).be.empty();
    });

    it('a click on a message no Session posted runs nothing and gets the note', async () => {
      await startWithButtons(slack.direct('U1', 'someone'), 'U1');
      const posts = fake.callsOf('chat.postMessage').length;
      const res = await clicks.post(
        clicks.button(
          { user: 'U1', channel: 'C0OTHER01', messageTs: '1699999999.000001' },
          { action_id: 'approve', block_id: 'decide', text: 'Approve', value: 'yes' },
        ),
      );
      should(res.status).equal(200);
      const [note] = await eventually(() => (fake.responses.length ? fake.responses : undefined), 5000, 'the ephemeral note');
      should(note.body.text).equal(ENDED);
      should(repliesSince(posts)).be.empty();
      should((await sessions()).map((s) => s.state)).deepEqual(['waiting']);
    });

    it('never calls a response_url on a foreign host: the note goes through chat.postEphemeral', async () => {
      const hits: string[] = [];
      const foreign: Server = createServer((req, res) => {
        hits.push(req.url ?? '');
        res.writeHead(200).end('ok');
      });
      await new Promise<void>((r) => foreign.listen(0, '127.0.0.1', () => r()));
      try {
        const port = (foreign.address() as AddressInfo).port;
        const res = await clicks.post(
          clicks.button(
            {
              user: 'U7',
              channel: 'C0OTHER01',
              messageTs: '1699999999.000002',
              threadTs: '1699999999.000001',
              responseUrl: `http://127.0.0.1:${port}/actions/T/1/secret`,
            },
            { action_id: 'approve', block_id: 'decide', text: 'Approve', value: 'yes' },
          ),
        );
        should(res.status).equal(200);
        const [call] = await eventually(
          () => (fake.callsOf('chat.postEphemeral').length ? fake.callsOf('chat.postEphemeral') : undefined),
          5000,
          'chat.postEphemeral',
        );
        should(call.body).containEql({ channel: 'C0OTHER01', user: 'U7', text: ENDED, thread_ts: '1699999999.000001' });
        should(call.token).equal(fake.botToken);
        should(hits).be.empty();
        should(fake.responses).be.empty();
      } finally {
        await new Promise<void>((r) => foreign.close(() => r()));
      }
    });

    it('refuses a forged signature with 401 and runs nothing', async () => {
      const started = await startWithButtons(slack.direct('U1', 'forged'), 'U1');
      const posts = fake.callsOf('chat.postMessage').length;
      const payload = clicks.button(started.at, { action_id: 'approve', block_id: 'decide', text: 'Approve', value: 'yes' });
      const forged = await clicks.post(payload, { secret: 'not-the-signing-secret' });
      should(forged.status).equal(401);
      should(forged.text).equal('');
      const stale = await clicks.post(payload, { timestamp: Math.floor(Date.now() / 1000) - 301 });
      should(stale.status).equal(401);
      // The genuine click (another trigger) still answers: the forged one left the Session waiting.
      const genuine = await clicks.post(clicks.button(started.at, { action_id: 'reject', block_id: 'decide', text: 'Reject', value: 'no' }));
      should(genuine.status).equal(200);
      await eventually(() => repliesSince(posts).length === 1, 5000, 'the answer');
      should(repliesSince(posts)).deepEqual(['You chose no (Reject via reject in decide, by U1)']);
      should(fake.responses).be.empty();
    });

    it('answers a retried delivery 200 and runs the click once, though the Session waits again', async () => {
      await deploy({}, { loop: true });
      const started = await startWithButtons(slack.direct('U1', 'retry'), 'U1');
      const posts = fake.callsOf('chat.postMessage').length;
      const payload = clicks.button(started.at, { action_id: 'approve', block_id: 'decide', text: 'Approve', value: 'yes' });
      should((await clicks.post(payload)).status).equal(200);
      should((await clicks.post(payload, { retryNum: 1 })).status).equal(200);
      // Handled in the conversation's order: had the retry run, its answer would come before this one.
      await slack.post(slack.envelope(slack.direct('U1', 'flush', { thread_ts: started.at.threadTs })));
      await eventually(() => repliesSince(posts).some((t) => t.startsWith('You chose flush')), 5000, 'the flush answer');
      should(repliesSince(posts)).deepEqual(['You chose yes (Approve via approve in decide, by U1)', 'You chose flush ( via  in , by )']);
      should(fake.responses).be.empty();
    });

    it('a second click on the same message answers when the Session waits again', async () => {
      await deploy({}, { loop: true });
      const started = await startWithButtons(slack.direct('U1', 'twice'), 'U1');
      const posts = fake.callsOf('chat.postMessage').length;
      await clicks.post(clicks.button(started.at, { action_id: 'approve', block_id: 'decide', text: 'Approve', value: 'yes' }));
      await eventually(() => repliesSince(posts).length === 1, 5000, 'the first answer');
      await clicks.post(clicks.button(started.at, { action_id: 'reject', block_id: 'decide', text: 'Reject', value: 'no' }));
      await eventually(() => repliesSince(posts).length === 2, 5000, 'the second answer');
      should(repliesSince(posts)).deepEqual(['You chose yes (Approve via approve in decide, by U1)', 'You chose no (Reject via reject in decide, by U1)']);
    });

    it('answers 404 to an unknown token and 400 to a signed body without a payload', async () => {
      await startWithButtons(slack.direct('U1', 'tokens'), 'U1');
      const unknown = await clicks.post(
        clicks.button({ user: 'U1', channel: 'D0DIRECT1', messageTs: '1.2' }, { action_id: 'a', block_id: 'b', text: 'A', value: 'a' }),
        { token: 'no-such-token' },
      );
      should(unknown.status).equal(404);
      const malformed = await clicks.post({}, { raw: 'payload=%7B%22type%22%3A' });
      should(malformed.status).equal(400);
      const missing = await clicks.post({}, { raw: 'nothing=here' });
      should(missing.status).equal(400);
      should((await sessions()).map((s) => s.state)).deepEqual(['waiting']);
    });

    it('logs the Interactivity URL on deploy', async () => {
      await red.waitForLog(new RegExp(`Interactivity URL: /TeamChat/interact/${clicks.token} \\(set the Public base URL`));
    });
  });

  describe('posted to a channel given by name', () => {
    beforeEach(async () => {
      await deploy({}, { channel: '#approvals' });
      fake.channelNames.set('approvals', 'C0APPROVALS');
    });

    it('a button click, which names the channel by its id, answers the InputTask', async () => {
      const started = await startWithButtons(slack.direct('U1', 'I need approval'), 'U1');
      should(started.at.channel).equal('C0APPROVALS');
      const posts = fake.callsOf('chat.postMessage').length;
      const res = await clicks.post(clicks.button(started.at, { action_id: 'approve', block_id: 'decide', text: 'Approve', value: 'yes' }));
      should(res.status).equal(200);
      await eventually(() => repliesSince(posts).length === 1, 5000, 'the answer to be posted');
      should(repliesSince(posts)).deepEqual(['You chose yes (Approve via approve in decide, by U1)']);
      should((await session(started.id)).vars.decision).equal('yes');
      should(fake.responses).be.empty();
      should(fake.callsOf('chat.postEphemeral')).be.empty();
    });
  });

  describe('in PerUserPerChannel mode', () => {
    beforeEach(async () => deploy({ sessionMode: 'PerUserPerChannel' }));

    it("a click from another user runs nothing and tells that user; the Session's own user answers", async () => {
      const mention = slack.channel('C0HELP001', 'U1', `<@${fake.botUserId}> approve my leave`);
      const started = await startWithButtons(slack.mention(mention), 'U1');
      const posts = fake.callsOf('chat.postMessage').length;
      const other = await clicks.post(
        clicks.button({ ...started.at, user: 'U2' }, { action_id: 'approve', block_id: 'decide', text: 'Approve', value: 'yes' }),
      );
      should(other.status).equal(200);
      const [note] = await eventually(() => (fake.responses.length ? fake.responses : undefined), 5000, 'the note to U2');
      should(note.body).deepEqual({ response_type: 'ephemeral', replace_original: false, text: NOT_YOURS });
      should(repliesSince(posts)).be.empty();
      should((await session(started.id)).state).equal('waiting');
      const own = await clicks.post(clicks.button(started.at, { action_id: 'reject', block_id: 'decide', text: 'Reject', value: 'no' }));
      should(own.status).equal(200);
      await eventually(() => repliesSince(posts).length === 1, 5000, 'the answer');
      should(repliesSince(posts)).deepEqual(['You chose no (Reject via reject in decide, by U1)']);
      should(fake.responses).have.length(1);
    });
  });
});
