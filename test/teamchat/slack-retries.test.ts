import should from 'should';
import type { WebClient } from '@slack/web-api';
import type { TaskError } from '../../src/model/errors';
import { postMessageCaller } from '../../src/teamchat/post-message';
import { postText, uploadFiles, type Poster } from '../../src/teamchat/posting';
import { createClient, learnIdentity, redLogger, slackFailure } from '../../src/teamchat/slack-api';
import { node, tab, uid } from '../harness/flows';
import { NodeRed, eventually, freePort } from '../harness/node-red';
import { FakeSlack } from '../fakes/slack-api';
import { SlackEvents } from '../fakes/slack-events';
import { SIGNING_SECRET, teamchatEnvironment } from '../fakes/slack-flows';

/**
 * The real WebClient from createClient, and the replies' chat.postMessage (post-message.ts, the
 * same fetch without the WebClient), against the fake Slack API on loopback: which faults are
 * tried again, how long it waits, and what the 4001 says when it gives up (through slackFailure,
 * as a Task gets it). Each test posts to its own channel, so a fault reaches only its own calls.
 */
describe('Slack Web API calls: retries and what a failure says', function () {
  this.timeout(15000);
  let fake: FakeSlack;
  let client: WebClient;
  let poster: Poster;
  const logged: string[] = [];
  const logger = () => redLogger({ warn: (m) => logged.push(m), error: (m) => logged.push(m), info: (m) => logged.push(m), debug: (m) => logged.push(m) });
  let n = 0;
  const channel = () => `C0RETRY${++n}`;
  const posterAt = (apiUrl: string, timeoutMs: number): Poster => ({
    postMessage: postMessageCaller(fake.botToken, apiUrl, (err) => logged.push(`http request failed ${err.message}`), timeoutMs),
  });
  const post = (to: string, api: Poster = poster) => postText(api, { channel: to }, 'hello');
  const failure = async (to: string, api: Poster = poster): Promise<TaskError> => {
    const err = await post(to, api).then(
      () => undefined,
      (e: TaskError) => e,
    );
    should.exist(err, 'the post should have failed');
    return err as TaskError;
  };
  const posted = (to: string) => fake.callsOf('chat.postMessage').filter((c) => c.body.channel === to && c.result?.ok);

  before(async () => {
    fake = await FakeSlack.start();
    client = createClient(fake.botToken, fake.apiUrl, logger(), 2000);
    poster = posterAt(fake.apiUrl, 2000);
  });
  after(async () => {
    should(logged.filter((line) => line.includes(fake.botToken))).eql([], 'the bot token is never logged');
    await fake?.close();
  });

  it("waits out a 429's Retry-After, then posts the message once", async () => {
    const to = channel();
    fake.inject(`chat.postMessage:${to}`, { status: 429, retryAfter: '1' });
    (await post(to)).should.have.property('ts').which.is.a.String().and.not.empty();
    const [first, second] = fake.attemptsOf('chat.postMessage', to);
    fake.attemptsOf('chat.postMessage', to).should.have.length(2);
    (second.at - first.at).should.be.aboveOrEqual(950);
    posted(to).should.have.length(1);
  });

  it('tries a 503 again and posts the message once', async () => {
    const to = channel();
    fake.inject(`chat.postMessage:${to}`, { status: 503 });
    await post(to);
    fake.attemptsOf('chat.postMessage', to).should.have.length(2);
    posted(to)
      .map((c) => c.body.text)
      .should.eql(['hello']);
  });

  it('tries again after the connection is reset, and posts the message once', async () => {
    const to = channel();
    fake.inject(`chat.postMessage:${to}`, { reset: true });
    await post(to);
    fake.attemptsOf('chat.postMessage', to).should.have.length(2);
    posted(to).should.have.length(1);
  });

  it('gives up after 2 retries: 503 three times is a 4001 naming the status and the attempts', async () => {
    const to = channel();
    fake.inject(`chat.postMessage:${to}`, { status: 503 }, { status: 503 }, { status: 503 });
    const err = await failure(to);
    err.code.should.equal(4001);
    err.message.should.equal('chat.postMessage: Slack answered HTTP 503 Service Unavailable after 3 attempts');
    fake.attemptsOf('chat.postMessage', to).should.have.length(3);
    posted(to).should.have.length(0);
    // The next post is not held back by the earlier failures.
    await post(to);
    posted(to).should.have.length(1);
  });

  it('does not wait a Retry-After longer than 10 s: one attempt, at once, and the 4001 says what Slack asked', async () => {
    const to = channel();
    fake.inject(`chat.postMessage:${to}`, { status: 429, retryAfter: '60' });
    const started = Date.now();
    const err = await failure(to);
    (Date.now() - started).should.be.below(2000);
    err.code.should.equal(4001);
    err.message.should.equal(
      'chat.postMessage: Slack answered HTTP 429 Too Many Requests and asked to wait 60 s, longer than the 10 s a call may wait; not tried again (1 attempt)',
    );
    fake.attemptsOf('chat.postMessage', to).should.have.length(1);
    // Node-RED's log says it too (at warn, as the WebClient says a failed request).
    logged.filter((line) => line.includes('chat.postMessage: Slack answered HTTP 429 Too Many Requests and asked to wait 60 s')).should.have.length(1);
    // Nothing else of the client waits either (the WebClient's own handling paused its whole queue).
    const other = channel();
    const quick = Date.now();
    await post(other);
    (Date.now() - quick).should.be.below(2000);
  });

  it('never posts again after a timeout, since Slack may have posted it; the 4001 says it did not answer', async () => {
    const to = channel();
    // The hold is well past the 0.5 s timeout, so the answer surely comes after it.
    const quick = posterAt(fake.apiUrl, 500);
    fake.inject(`chat.postMessage:${to}`, { holdMs: 2500 });
    const err = await failure(to, quick);
    err.code.should.equal(4001);
    err.message.should.equal('chat.postMessage: Slack did not answer within 0.5 s; it was not sent again, as Slack may have carried it out');
    fake.attemptsOf('chat.postMessage', to).should.have.length(1);
    // The slow Slack did post it: the person sees it exactly once.
    await new Promise((r) => setTimeout(r, 2500));
    fake.attemptsOf('chat.postMessage', to).should.have.length(1);
    posted(to).should.have.length(1);
  });

  it('never posts again when the answer is cut off mid-body: Slack had it', async () => {
    const to = channel();
    fake.inject(`chat.postMessage:${to}`, { cutOff: true });
    const err = await failure(to);
    err.message.should.match(
      /^chat\.postMessage: Slack answered HTTP 200, but the answer was cut off( \(\w+\))?; it was not sent again, as Slack may have carried it out$/,
    );
    fake.attemptsOf('chat.postMessage', to).should.have.length(1);
    posted(to).should.have.length(1);
  });

  it('reads an answer that does not end no further than 4 MB: the connection is closed, a 4001 says so, and it is not posted again', async () => {
    const to = channel();
    fake.inject(`chat.postMessage:${to}`, { endless: true });
    const err = await failure(to);
    err.message.should.equal(
      'chat.postMessage: Slack answered HTTP 200 with more than the 4 MB an API answer may have, so it was not read; it was not sent again, as Slack may have carried it out',
    );
    const [endless, ...again] = fake.attemptsOf('chat.postMessage', to);
    again.should.have.length(0);
    (await eventually(() => endless.closedEarly !== undefined || undefined, 5000, 'the endless answer to stop')).should.be.true();
    endless.closedEarly!.should.be.true();
  });

  it('a refused connection is tried 3 times, then a 4001 saying so', async () => {
    const closed = posterAt(`http://127.0.0.1:${await freePort()}/api/`, 2000);
    const err = await failure(channel(), closed);
    err.code.should.equal(4001);
    err.message.should.equal('chat.postMessage: Slack could not be reached: the connection was refused (ECONNREFUSED); 3 attempts');
  });

  it("does not retry Slack's refusals (ok:false, channel_not_found) nor a 501", async () => {
    const to = channel();
    fake.failures.set(`chat.postMessage:${to}`, 'channel_not_found');
    (await failure(to)).message.should.equal('chat.postMessage: Slack answered channel_not_found');
    fake.attemptsOf('chat.postMessage', to).should.have.length(1);
    const other = channel();
    fake.inject(`chat.postMessage:${other}`, { status: 501 });
    (await failure(other)).message.should.equal('chat.postMessage: Slack answered HTTP 501 Not Implemented');
    fake.attemptsOf('chat.postMessage', other).should.have.length(1);
  });

  it('auth.test and users.info are retried the same way', async () => {
    fake.inject('auth.test', { reset: true });
    (await learnIdentity(client)).botUserId!.should.equal(fake.botUserId);
    fake.attemptsOf('auth.test').should.have.length(2);
    fake.users.U0RETRY = { name: 'ret', real_name: 'Re Try', display_name: 'retry' };
    fake.inject('users.info', { status: 502 });
    const info = await client.users.info({ user: 'U0RETRY' });
    info.user!.real_name!.should.equal('Re Try');
    fake.attemptsOf('users.info').should.have.length(2);
  });

  it('an upload whose upload POST gets a 503 once still uploads the file once', async () => {
    const to = channel();
    const data = Buffer.from('retried upload bytes');
    fake.inject('upload', { status: 503 });
    await uploadFiles(client, { channel: to }, [{ name: 'r.txt', type: 'text/plain', size: data.length, read: async () => data }]);
    fake.attemptsOf('upload').should.have.length(2);
    const uploads = [...fake.uploads.values()].filter((u) => u.filename === 'r.txt');
    uploads.should.have.length(1);
    uploads[0].data.toString().should.equal('retried upload bytes');
    uploads[0].received!.should.equal(1);
    fake
      .callsOf('files.completeUploadExternal')
      .filter((c) => c.body.channel_id === to)
      .should.have.length(1);
  });

  it('an upload POST that keeps failing is a 4001 for the files upload', async () => {
    const data = Buffer.from('never uploaded');
    fake.inject('upload', { status: 503 }, { status: 503 }, { status: 503 });
    const err = await uploadFiles(client, { channel: channel() }, [{ name: 'n.txt', type: 'text/plain', size: data.length, read: async () => data }]).then(
      () => undefined,
      (e: TaskError) => e,
    );
    should.exist(err);
    err!.code.should.equal(4001);
    err!.message.should.equal('files upload: Slack answered HTTP 503 Service Unavailable after 3 attempts');
    logged.filter((line) => line.includes('the file upload: Slack answered HTTP 503 Service Unavailable after 3 attempts')).should.have.length(1);
  });

  it('slackFailure words a WebClient request error that is not ours as Slack not reached', () => {
    const err = Object.assign(new Error('A request error occurred: boom'), { code: 'slack_webapi_request_error', original: new Error('boom') });
    slackFailure(err, 'users.info').message.should.equal('users.info: Slack could not be reached: boom');
  });
});

/** The same through a real Node-RED: a conversation's reply meets a Slack 503 once. */
describe('Slack Web API retries in a conversation', function () {
  let red: NodeRed;
  let fake: FakeSlack;

  before(async function () {
    fake = await FakeSlack.start();
    red = await NodeRed.start();
  });
  after(async function () {
    await red?.close();
    await fake?.close();
  });

  it('a 503 on chat.postMessage once: the person gets exactly one reply', async function () {
    const z = uid('tab');
    const envId = uid('env');
    const token = `tok${uid('t')}RRRRRRRRRRRRRRRRRRRR`;
    const out = uid('out');
    await red.deploy([
      tab(z, 'Retries'),
      teamchatEnvironment(envId, token, fake),
      node('teamchat-start', uid('s'), z, { environment: envId }, [[out]]),
      node('output-task', out, z, { text: 'one reply' }, [[], []]),
    ]);
    const slack = new SlackEvents(red, token, SIGNING_SECRET, fake.team);
    fake.inject('chat.postMessage', { status: 503 });
    const res = await slack.post(slack.envelope(slack.direct('U1', 'hi')));
    should(res.status).equal(200, res.text);
    await eventually(() => fake.callsOf('chat.postMessage').length > 0, 8000, 'the reply to be posted');
    // Long enough for a second copy to show, were one coming.
    await new Promise((r) => setTimeout(r, 1000));
    should(fake.callsOf('chat.postMessage').map((c) => c.body.text)).eql(['one reply']);
    should(fake.attemptsOf('chat.postMessage')).have.length(2);
  });
});
