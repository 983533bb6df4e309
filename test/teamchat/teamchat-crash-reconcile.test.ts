import should from 'should';
import { tab, uid } from '../harness/flows';
import { NodeRed, eventually } from '../harness/node-red';
import { FakeSlack, type SlackApiFault } from '../fakes/slack-api';
import { SlackEvents } from '../fakes/slack-events';
import { helpDesk, SIGNING_SECRET, teamchatEnvironment } from '../fakes/slack-flows';

/**
 * Node-RED killed (SIGKILL) while a reply's chat.postMessage is at Slack, which posted it but had
 * not answered: the step runs again after the restart, and the thread is read for the reply's
 * metadata before it is posted again. The person reads each thing once; where the thread cannot be
 * read (no history scope), the reply goes again and the log says, once, that it may be a duplicate.
 */
describe('team chat: a reply in flight at a crash is found in the thread, not posted again', function () {
  this.timeout(90000);
  let fake: FakeSlack;
  let red: NodeRed;
  let slack: SlackEvents;
  /** The same help desk on an Environment that replies outside threads (PerChannel). */
  let flat: SlackEvents;
  let envId: string;

  before(async function () {
    fake = await FakeSlack.start();
    red = await NodeRed.start();
    const z = uid('tab');
    envId = uid('env');
    const token = `tok${uid('k')}AAAAAAAAAAAAAAAAAAAA`;
    const ids = { start: uid('s'), hello: uid('h'), ask: uid('a'), reply: uid('r'), end: uid('e') };
    const flatToken = `tok${uid('f')}AAAAAAAAAAAAAAAAAAAA`;
    const flatIds = { start: uid('s'), hello: uid('h'), ask: uid('a'), reply: uid('r'), end: uid('e') };
    await red.deploy([
      tab(z, 'Help desk'),
      teamchatEnvironment(envId, token, fake),
      ...helpDesk(z, envId, ids, { hello: 'Hello {teamchat.text}' }),
      teamchatEnvironment('envFlat', flatToken, fake, { sessionMode: 'PerChannel', useThreads: false }),
      ...helpDesk(z, 'envFlat', flatIds, { hello: 'Hello {teamchat.text}' }),
    ]);
    slack = new SlackEvents(red, token, SIGNING_SECRET, fake.team);
    flat = new SlackEvents(red, flatToken, SIGNING_SECRET, fake.team);
  });
  after(async function () {
    await red?.close();
    await fake?.close();
  });

  const texts = (channel: string) =>
    fake
      .callsOf('chat.postMessage')
      .filter((c) => c.body.channel === channel && c.result?.ok)
      .map((c) => String(c.body.text));
  const mayRepeat = () => red.logs.filter((line) => /may be a duplicate/.test(line));

  /** The person writes; Slack posts the reply and never answers; Node-RED dies and comes back. Resolves to the person's message ts (the thread). */
  async function crashWhileReplying(channel: string, fault: SlackApiFault = { madeThenHeld: true }, events = slack): Promise<string> {
    fake.inject(`chat.postMessage:${channel}`, fault);
    const message = events.direct('U0PERSON1', 'hi', { channel });
    should((await events.post(events.envelope(message))).status).equal(200);
    await eventually(() => fake.attemptsOf('chat.postMessage', channel).length === 1, 15000, "the reply's request at Slack");
    await red.kill();
    await red.relaunch();
    await eventually(() => texts(channel).includes('What else?'), 20000, 'the next prompt after the restart');
    return String(message.ts);
  }

  it('finds the reply by its metadata after the restart: it is not posted again, and the next prompt follows once', async function () {
    const channel = 'D0RECON01';
    const thread = await crashWhileReplying(channel);
    should(texts(channel)).eql(['Hello hi', 'What else?']);
    const read = fake.callsOf('conversations.replies').filter((c) => c.body.channel === channel);
    should(read).not.be.empty();
    should(read[0].body).containEql({ ts: thread, include_all_metadata: 'true' });
    should(mayRepeat()).eql([]);
    await slack.post(slack.envelope(slack.direct('U0PERSON1', 'more', { channel, thread_ts: thread })));
    await eventually(() => texts(channel).includes('Got more'), 15000, 'the last reply');
    should(texts(channel)).eql(['Hello hi', 'What else?', 'Got more']);
  });

  it('finds a reply posted outside any thread in the conversation history', async function () {
    const channel = 'D0RECON04';
    await crashWhileReplying(channel, { madeThenHeld: true }, flat);
    should(texts(channel)).eql(['Hello hi', 'What else?']);
    const read = fake.callsOf('conversations.history').filter((c) => c.body.channel === channel);
    should(read).not.be.empty();
    should(read[0].body).containEql({ include_all_metadata: 'true' });
    should(fake.callsOf('chat.postMessage').filter((c) => c.body.channel === channel && c.body.thread_ts)).eql([]);
  });

  it('posts the reply again when the thread cannot be read (no im:history), with one warning that it may be a duplicate', async function () {
    const channel = 'D0RECON02';
    const warnedBefore = mayRepeat().length;
    fake.scopes = 'chat:write,users:read';
    try {
      await crashWhileReplying(channel);
    } finally {
      fake.scopes = 'chat:write,im:history,app_mentions:read,channels:history,groups:history,users:read,files:read,files:write';
    }
    should(texts(channel)).eql(['Hello hi', 'Hello hi', 'What else?']);
    const warned = mayRepeat().slice(warnedBefore);
    should(warned).have.length(1);
    should(warned[0]).match(/im:history/);
    should(warned[0]).not.containEql(fake.botToken);
  });

  it('posts the reply once after the restart when Slack had not posted it: not found, no warning', async function () {
    const channel = 'D0RECON03';
    const warnedBefore = mayRepeat().length;
    await crashWhileReplying(channel, { neverAnswered: true });
    should(texts(channel)).eql(['Hello hi', 'What else?']);
    should(fake.attemptsOf('chat.postMessage', channel)).have.length(3);
    should(mayRepeat().slice(warnedBefore)).eql([]);
  });
});
