import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import should from 'should';
import { NodeRed, REPO_ROOT, eventually } from '../harness/node-red';
import { FakeSlack } from '../fakes/slack-api';
import { SlackEvents } from '../fakes/slack-events';
import { SIGNING_SECRET } from '../fakes/slack-flows';

const EXAMPLE = join(REPO_ROOT, 'examples', 'Slack help-desk bot.json');
const START = 'cshd000000000010';
const ENV = 'cshd000000000002';

/** The example flow deploys as it is shipped, runs in the test chat, and runs against Slack. */
describe('team chat: example "Slack help-desk bot"', function () {
  let red: NodeRed;
  let fake: FakeSlack;
  const flow = () => JSON.parse(readFileSync(EXAMPLE, 'utf8')) as any[];

  before(async function () {
    fake = await FakeSlack.start();
    red = await NodeRed.start();
  });
  after(async function () {
    await red?.close();
    await fake?.close();
  });

  it('deploys as is and runs in the test chat: without credentials the ticket card fails once (4012) and the Session ends', async function () {
    await red.deploy(flow());
    const started = await red.admin('POST', '/channel-sessions/test-sessions', { start: START });
    should(started.status).equal(201, started.text);
    should(started.body.state).equal('waiting');
    const png = Buffer.from('fake png').toString('base64');
    const second = await red.admin('POST', `/channel-sessions/test-sessions/${started.body.id}/messages`, {
      text: 'It jams on page 2',
      files: [{ name: 'jam.png', type: 'image/png', data: png }],
    });
    should(second.body.state).equal('completed', JSON.stringify(second.body.transcript));
    const texts: string[] = second.body.transcript.map((l: any) => l.text);
    should(texts.filter((t) => /\b(4012|3005)\b/.test(t))).eql([
      'Sorry, I could not file the ticket (4012: No channel to post to: the Channel is empty and Environment "Help desk workspace" has no Default Channel). Please try again later.',
    ]);
  });

  it('runs against Slack: thread replies, files in and out, the ticket card and the notification', async function () {
    const nodes = flow().map((n) =>
      n.id === ENV
        ? {
            ...n,
            apiUrl: fake.apiUrl,
            defaultChannel: 'C0SUPPORT',
            credentials: { botToken: fake.botToken, signingSecret: SIGNING_SECRET, token: 'exampleTokenAAAAAAAAAAAA' },
          }
        : n,
    );
    await red.deploy(nodes);
    fake.users.U1 = { name: 'ada', real_name: 'Ada Lovelace', display_name: 'Ada' };
    const slack = new SlackEvents(red, 'exampleTokenAAAAAAAAAAAA', SIGNING_SECRET, fake.team);
    const first = slack.mention(slack.channel('C0GENERAL', 'U1', '<@UBOT0001> my printer is broken'));
    await slack.post(slack.envelope(first));
    await eventually(() => fake.callsOf('chat.postMessage').length === 2, 5000, 'greeting and prompt');
    const url = fake.addFile('jam.png', Buffer.from('fake png'), 'image/png');
    await slack.post(
      slack.envelope(
        slack.channel('C0GENERAL', 'U1', 'jams on page 2', {
          subtype: 'file_share',
          thread_ts: first.ts,
          files: [{ id: 'F1', name: 'jam.png', mimetype: 'image/png', size: 8, url_private_download: url }],
        }),
      ),
    );
    await eventually(() => fake.callsOf('chat.postMessage').length === 5, 5000, 'card, notification and confirmation').catch(async (err) => {
      const list = (await red.admin('GET', '/channel-sessions/sessions?ended=true')).body;
      const d = (await red.admin('GET', `/channel-sessions/sessions/${list.find((s: any) => s.channel === 'TeamChatChannel')?.id}`)).body;
      throw new Error(`${err.message}: ${JSON.stringify(fake.calls.map((c) => [c.method, c.body.text]))} ${JSON.stringify(d.log)} ${d.state}`);
    });
    const posts = fake.callsOf('chat.postMessage').map((c) => c.body);
    should(posts.map((p) => [p.channel, p.thread_ts])).eql([
      ['C0GENERAL', first.ts],
      ['C0GENERAL', first.ts],
      ['C0GENERAL', first.ts],
      ['C0SUPPORT', undefined],
      ['C0GENERAL', first.ts],
    ]);
    should(posts[0].text).equal('Hi Ada, sorry to hear that. I will open a ticket for: my printer is broken');
    should(posts[2].blocks[2].text.text).equal('*Problem*\njams on page 2');
    should(posts[3].text).equal('New ticket from <@U1>: jams on page 2');
    const complete = fake.callsOf('files.completeUploadExternal')[0].body;
    should([complete.channel_id, complete.thread_ts]).eql(['C0SUPPORT', undefined]);
    should([...fake.uploads.values()][0].data.toString()).equal('fake png');
  });
});
