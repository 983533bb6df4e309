import should from 'should';
import { tab, uid } from '../harness/flows';
import { NodeRed, eventually } from '../harness/node-red';
import { RedisServer } from '../harness/redis';
import { FakeSlack } from '../fakes/slack-api';
import { SlackEvents } from '../fakes/slack-events';
import { SIGNING_SECRET, helpDesk, teamchatEnvironment } from '../fakes/slack-flows';
import { FakeSocketMode } from '../fakes/slack-socket-mode';

/** settings.js as the README tells users to write it for the Redis store. */
const redisSettings = (url: string) => `module.exports.contextStorage = {
  default: { module: 'memory' },
  shared: { module: require('@channel-sessions/node-red/redis-context'), config: { url: ${JSON.stringify(url)} } },
};`;

/** Slack's retries are minutes apart; here a fifth of a second. */
async function untilTrue(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/**
 * Acknowledged means recorded, over both transports: while the Session store cannot be written,
 * the event URL answers 503 and a Socket Mode envelope is left unacknowledged; Slack's next
 * delivery, once the store is back, runs the message once.
 */
describe('team chat: nothing acknowledged that was not recorded (event URL and Socket Mode)', function () {
  this.timeout(90000);
  let redis: RedisServer;
  let red: NodeRed;
  let fake: FakeSlack;
  let socket: FakeSocketMode;
  let slack: SlackEvents;
  let envId: string;

  before(async function () {
    redis = await RedisServer.start();
    fake = await FakeSlack.start();
    socket = await FakeSocketMode.start();
    fake.socketUrl = () => socket.url();
    red = await NodeRed.start({ settingsCode: redisSettings(redis.url) });
    const z = uid('tab');
    envId = uid('env');
    const token = `tok${uid('f')}AAAAAAAAAAAAAAAAAAAA`;
    const ids = { start: uid('s'), hello: uid('h'), ask: uid('a'), reply: uid('r'), end: uid('e') };
    await red.deploy([
      tab(z, 'Help desk'),
      teamchatEnvironment(envId, token, fake, { socketMode: true, sessionStore: 'shared' }, { appToken: fake.appToken }),
      ...helpDesk(z, envId, ids),
    ]);
    slack = new SlackEvents(red, token, SIGNING_SECRET, fake.team);
    await eventually(() => socket.live === 1, 10000, 'the Socket Mode connection');
  });
  after(async function () {
    await red?.close();
    await socket?.close();
    await fake?.close();
    await redis?.close();
  });

  async function sessions(): Promise<any[]> {
    return (await red.admin('GET', `/channel-sessions/sessions?environment=${envId}`)).body;
  }

  it('answers 503 and leaves the envelope unacknowledged while the store is down; the redeliveries run once', async function () {
    await redis.stop();
    const overHttp = slack.envelope(slack.direct('U1', 'over http', { channel: 'D0HTTP001' }));
    const refused = await slack.post(overHttp);
    should(refused.status).equal(503);
    const overSocket = slack.envelope(slack.direct('U2', 'over the socket', { channel: 'D0SOCKET1' }));
    await socket.send('events_api', overSocket, { timeoutMs: 2000 }).should.be.rejectedWith(/not acknowledged/);
    should(socket.unacknowledged()).have.length(1);
    should(fake.callsOf('chat.postMessage')).be.empty();

    await redis.start();
    // Slack retries the HTTP event (with its retry number) until it gets a 2xx.
    let retry = 0;
    await untilTrue(async () => (await slack.post(overHttp, { retryNum: ++retry })).status === 200, 30000, 'the retried event to be recorded');
    // And delivers the envelope nobody acknowledged again.
    await untilTrue(
      async () =>
        (await socket.redeliverUnacknowledged(2000).then(
          () => true,
          () => false,
        )) && socket.unacknowledged().length === 0,
      30000,
      'the redelivered envelope acknowledged',
    );
    await eventually(async () => (await sessions()).filter((s) => s.state === 'waiting').length === 2, 10000, 'two waiting Sessions');
    const greetings = fake.callsOf('chat.postMessage').filter((c) => c.body.text.startsWith('Hello'));
    should(greetings.map((c) => c.body.channel).sort()).deepEqual(['D0HTTP001', 'D0SOCKET1']);
  });
});
