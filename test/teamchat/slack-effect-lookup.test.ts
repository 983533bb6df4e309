import should from 'should';
import type { WebClient } from '@slack/web-api';
import type { Effect } from '../../src/engine/effects';
import type { TaskError } from '../../src/model/errors';
import { findSlackEffect, LOOKUP_PAGE_SIZE, LOOKUP_PAGES } from '../../src/teamchat/effect-lookup';
import { postMessageCaller } from '../../src/teamchat/post-message';
import { postText, type Poster } from '../../src/teamchat/posting';
import { createClient, redLogger } from '../../src/teamchat/slack-api';
import { FakeSlack } from '../fakes/slack-api';

/**
 * A post that is a step's effect carries its key in Slack's message metadata, and the step, run
 * again after the process died before Slack answered, finds it by reading the conversation since
 * the step began. The real WebClient and the replies' chat.postMessage against the fake Slack API
 * on loopback, which keeps each message's metadata and lists them as Slack does.
 */
describe('Slack: finding a post by its effect key', function () {
  this.timeout(15000);
  let fake: FakeSlack;
  let client: WebClient;
  let poster: Poster;
  const logged: string[] = [];
  let n = 0;
  const channel = () => `C0LOOK${++n}`;
  /** A step's journal as the post sees it: this effect has this key. */
  const as =
    (key: string): Effect =>
    (_kind, send) =>
      send(key);

  before(async () => {
    fake = await FakeSlack.start();
    const log = (m: string) => logged.push(m);
    client = createClient(fake.botToken, fake.apiUrl, redLogger({ warn: log, error: log, info: log, debug: log }), 2000);
    poster = { postMessage: postMessageCaller(fake.botToken, fake.apiUrl, (err) => log(err.message), 2000) };
  });
  afterEach(() => {
    fake.scopes = 'chat:write,im:history,channels:history,groups:history';
    fake.failures.clear();
  });
  after(async () => {
    should(logged.filter((line) => line.includes(fake.botToken))).eql([], 'the bot token is never logged');
    await fake?.close();
  });

  it('posts with metadata naming the key, and finds that post in the channel', async () => {
    const to = channel();
    const since = Date.now();
    await postText(poster, { channel: to }, 'earlier, another step', undefined, as('S1:1:0'));
    const posted = await postText(poster, { channel: to }, 'Your name?', undefined, as('S1:2:0'));
    fake
      .callsOf('chat.postMessage')
      .at(-1)!
      .body.metadata.should.eql({ event_type: 'channel_sessions_effect', event_payload: { key: 'S1:2:0' } });
    const found = await findSlackEffect(client, { channel: to }, 'S1:2:0', since);
    should(found).eql({ ts: posted.ts, channel: to });
    const asked = fake.callsOf('conversations.history').at(-1)!.body;
    asked.should.containEql({ channel: to, include_all_metadata: 'true' });
    Number(asked.oldest).should.be.belowOrEqual(since / 1000);
  });

  it('finds a post in a thread with conversations.replies', async () => {
    const to = channel();
    const root = await postText(poster, { channel: to }, 'root');
    const since = Date.now();
    const reply = await postText(poster, { channel: to, threadTs: root.ts }, 'in the thread', undefined, as('S2:1:0'));
    should(await findSlackEffect(client, { channel: to, threadTs: root.ts }, 'S2:1:0', since)).eql({ ts: reply.ts, channel: to });
    fake.callsOf('conversations.replies').at(-1)!.body.should.containEql({ channel: to, ts: root.ts });
  });

  it('finds nothing when no post carries the key (none was made, or only a post without metadata)', async () => {
    const to = channel();
    const since = Date.now();
    await postText(poster, { channel: to }, 'no key');
    await postText(poster, { channel: to }, 'another key', undefined, as('S3:1:0'));
    should(await findSlackEffect(client, { channel: to }, 'S3:1:1', since)).be.undefined();
  });

  it('reads past the first page, and no further than its bound', async () => {
    const to = channel();
    const since = Date.now();
    const first = await postText(poster, { channel: to }, 'the effect', undefined, as('S4:1:0'));
    for (let i = 0; i < LOOKUP_PAGE_SIZE; i++) await postText(poster, { channel: to }, `later ${i}`);
    // The channel lists newest first: the effect is on the second page.
    should(await findSlackEffect(client, { channel: to }, 'S4:1:0', since)).eql({ ts: first.ts, channel: to });
    fake
      .callsOf('conversations.history')
      .filter((c) => c.body.channel === to)
      .should.have.length(2);
    for (let i = 0; i < LOOKUP_PAGE_SIZE * LOOKUP_PAGES; i++) await postText(poster, { channel: to }, `even later ${i}`);
    const err = await findSlackEffect(client, { channel: to }, 'S4:1:0', since).then(
      () => undefined,
      (e: Error) => e,
    );
    should.exist(err, 'a search cut at its bound cannot say the post is not there');
    fake
      .callsOf('conversations.history')
      .filter((c) => c.body.channel === to)
      .should.have.length(2 + LOOKUP_PAGES);
  });

  it('throws when the token lacks the history scope of the conversation (a direct message: im:history)', async () => {
    const to = 'D0LOOK1';
    const since = Date.now();
    await postText(poster, { channel: to }, 'hello', undefined, as('S5:1:0'));
    fake.scopes = 'chat:write';
    const err = (await findSlackEffect(client, { channel: to }, 'S5:1:0', since).then(
      () => undefined,
      (e: TaskError) => e,
    )) as TaskError;
    should.exist(err);
    err.code.should.equal(4008);
    err.message.should.match(/im:history/);
  });

  it('throws at once when Slack asks to wait a minute (the history rate limit of apps outside the Marketplace)', async () => {
    const to = channel();
    fake.inject(`conversations.history:${to}`, { status: 429, retryAfter: '60' });
    const err = (await findSlackEffect(client, { channel: to }, 'S7:1:0', Date.now()).then(
      () => undefined,
      (e: TaskError) => e,
    )) as TaskError;
    should.exist(err);
    err.message.should.match(/conversations\.history.*429.*60 s/);
    fake.attemptsOf('conversations.history', to).should.have.length(1);
  });

  it('throws when Slack fails the call', async () => {
    const to = channel();
    fake.inject(`conversations.history:${to}`, { status: 500 }, { status: 500 }, { status: 500 });
    const err = (await findSlackEffect(client, { channel: to }, 'S6:1:0', Date.now()).then(
      () => undefined,
      (e: TaskError) => e,
    )) as TaskError;
    should.exist(err);
    err.code.should.equal(4001);
    err.message.should.match(/conversations\.history/);
  });
});
