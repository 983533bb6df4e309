import should from 'should';
import { chain, tab } from '../harness/flows';
import { NodeRed, eventually } from '../harness/node-red';
import { RedisServer, redisContextSettings } from '../harness/redis';
import { FakeSlack } from '../fakes/slack-api';
import { SlackEvents } from '../fakes/slack-events';
import { helpDesk, SIGNING_SECRET, teamchatEnvironment } from '../fakes/slack-flows';
import { FakeTwilioMessagingApi } from '../fakes/twilio-messaging-api';
import { ACCOUNT_SID, AUTH_TOKEN, inboundForm, messagingEnvironment, postInbound } from '../fakes/twilio-messaging-webhooks';

const OURS = '+15550008000';
const PEOPLE = 6;

/**
 * Three instances on Redis; the one running the steps is killed (SIGKILL) while the provider holds
 * their replies, which it made. The instances that take the conversations over run the steps
 * again, find each reply at the provider (the Messages list, the Slack thread), and send nothing twice.
 */
describe("several instances on Redis: the instance that takes over a dead one's steps sends nothing twice", function () {
  this.timeout(180000);
  let redis: RedisServer;
  let fake: FakeTwilioMessagingApi;
  let slack: FakeSlack;
  const reds: NodeRed[] = [];
  const token = 'tok-cluster-reconcile';
  const slackToken = 'tokClusterReconcileAAAAAAAAAAAAAAAAAAAA';

  before(async function () {
    redis = await RedisServer.start();
    fake = await FakeTwilioMessagingApi.start(ACCOUNT_SID, AUTH_TOKEN);
    slack = await FakeSlack.start();
    // One after another: three runtimes loading at once on a busy 2-core machine can miss the start timeout.
    for (let i = 0; i < 3; i++) reds.push(await NodeRed.start({ settingsCode: redisContextSettings(redis.url) }));
    for (const red of reds) {
      await red.deploy([
        messagingEnvironment('envCluster', token, fake, red, { sessionStore: 'shared' }),
        tab('clr', 'Reconcile'),
        ...chain('clr', [
          ['telco-sms-start', 'clrStart', { environment: 'envCluster' }],
          ['output-task', 'clrGot', { text: 'Got {message.text}' }],
          ['input-task', 'clrNext', { prompt: 'Next?', resultVariable: 'next' }],
          ['end-task', 'clrEnd'],
        ]),
        teamchatEnvironment('envClusterSlack', slackToken, slack, { sessionStore: 'shared' }),
        ...helpDesk('clr', 'envClusterSlack', { start: 'clrS', hello: 'clrH', ask: 'clrA', reply: 'clrR', end: 'clrE' }, { hello: 'Hello {teamchat.text}' }),
      ]);
    }
  });
  after(async function () {
    for (const red of reds) await red.close();
    await fake?.close();
    await slack?.close();
    await redis?.close();
  });

  it(`kill -9 of the instance whose ${PEOPLE} replies are held: each person gets the reply and the next prompt once`, async function () {
    const people = Array.from({ length: PEOPLE }, (_, i) => `+1555800${String(i).padStart(4, '0')}`);
    const victim = reds[2];
    for (const person of people) {
      fake.inject(person, { madeThenHeld: true });
      should((await postInbound(victim, token, inboundForm(person, OURS, 'hi'))).status).equal(200);
    }
    await eventually(() => people.every((p) => fake.made.some((m) => m.to === p && m.body === 'Got hi')), 20000, 'every reply made at the provider');
    await victim.kill();
    const bodies = (person: string) => fake.messagesTo(person).map((m) => String(m.Body));
    await eventually(() => people.every((p) => bodies(p).includes('Next?')), 60000, 'every next prompt from the instances that took over');
    for (const person of people) should(bodies(person)).eql(['Got hi', 'Next?'], person);
    should(reds.flatMap((red) => red.logs).filter((line) => /may be a duplicate/.test(line))).eql([]);
  });

  it(`the same on Slack: kill -9 of the instance whose ${PEOPLE} posts are held, each thread gets the reply and the next prompt once`, async function () {
    const victim = reds[1];
    const events = new SlackEvents(victim, slackToken, SIGNING_SECRET, slack.team);
    const channels = Array.from({ length: PEOPLE }, (_, i) => `D0CLUSTER${i}`);
    for (const channel of channels) {
      slack.inject(`chat.postMessage:${channel}`, { madeThenHeld: true });
      should((await events.post(events.envelope(events.direct('U0PERSON1', 'hi', { channel })))).status).equal(200);
    }
    const texts = (channel: string) =>
      slack
        .callsOf('chat.postMessage')
        .filter((c) => c.body.channel === channel && c.result?.ok)
        .map((c) => String(c.body.text));
    await eventually(() => channels.every((c) => texts(c).includes('Hello hi')), 20000, 'every reply posted at Slack');
    const warnedBefore = reds.flatMap((red) => red.logs).filter((line) => /may be a duplicate/.test(line)).length;
    await victim.kill();
    await eventually(() => channels.every((c) => texts(c).includes('What else?')), 60000, 'every next prompt from the instance that took over');
    for (const channel of channels) should(texts(channel)).eql(['Hello hi', 'What else?'], channel);
    should(reds.flatMap((red) => red.logs).filter((line) => /may be a duplicate/.test(line)).length).equal(warnedBefore);
  });
});
