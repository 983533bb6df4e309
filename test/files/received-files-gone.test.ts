import { existsSync, readdirSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import should from 'should';
import { chain, tab, uid } from '../harness/flows';
import { NodeRed, eventually } from '../harness/node-red';
import { FakeTwilioMessagingApi } from '../fakes/twilio-messaging-api';
import { ACCOUNT_SID, AUTH_TOKEN, inboundForm, messageSid, messagingEnvironment, postInbound } from '../fakes/twilio-messaging-webhooks';

const OURS = '+15550007100';
const JPEG = Buffer.from('ffd8ffe000104a46494600010100000100010000ffd9', 'hex');

/**
 * A first message with a photo opens a Session whose step downloads the photo and then runs a slow
 * node; Node-RED is killed there. After the restart the step runs again (at least once) and opens
 * the Session anew, downloading the photo again: the first attempt's folder belongs to no Session.
 */
describe('received files of Sessions no store knows', function () {
  this.timeout(60000);
  let red: NodeRed;
  let fake: FakeTwilioMessagingApi;
  const token = `tok-gone-${uid()}`;

  before(async function () {
    fake = await FakeTwilioMessagingApi.start(ACCOUNT_SID, AUTH_TOKEN);
    red = await NodeRed.start({ settings: { channelSessions: { sweepInterval: 1 } } });
    const z = 'goneTab';
    await red.deploy([
      messagingEnvironment('goneEnv', token, fake, red),
      tab(z, 'Photos'),
      ...chain(z, [
        ['telco-sms-start', 'goneStart', { environment: 'goneEnv' }],
        [
          'delay',
          'goneSlow',
          {
            pauseType: 'delay',
            timeout: '3',
            timeoutUnits: 'seconds',
            rate: '1',
            nbRateUnits: '1',
            rateUnits: 'second',
            randomFirst: '1',
            randomLast: '5',
            randomUnits: 'seconds',
            drop: false,
            allowrate: false,
            outputs: 1,
          },
        ],
        ['input-task', 'goneAsk', { prompt: 'Got {message.files.count} photo(s). Name?', resultVariable: 'name' }],
        ['end-task', 'goneEnd'],
      ]),
    ]);
  });
  after(async function () {
    await red?.close();
    await fake?.close();
  });

  const folders = () => {
    const dir = join(red.userDir, 'channel-sessions', 'workspace', 'sessions');
    return existsSync(dir) ? readdirSync(dir).sort() : [];
  };
  const anHourAgo = (id: string) => {
    const past = new Date(Date.now() - 60 * 60 * 1000);
    utimesSync(join(red.userDir, 'channel-sessions', 'workspace', 'sessions', id), past, past);
  };
  const photo = (from: string) => {
    const sid = messageSid('MM');
    return inboundForm(from, OURS, 'here', {
      MessageSid: sid,
      NumMedia: '1',
      MediaUrl0: fake.addMedia(sid, `ME${uid()}`.padEnd(34, '0'), { data: JPEG, type: 'image/jpeg' }),
      MediaContentType0: 'image/jpeg',
    });
  };

  it('removes, after a restart, the folder a step left when it ran again, and keeps the folders of live Sessions', async function () {
    // A Session that waits, with its photo, since long ago: its folder stays.
    const waiting = '+15557100001';
    should((await postInbound(red, token, photo(waiting))).status).equal(200);
    await eventually(() => fake.messagesTo(waiting).length === 1, 15000, 'the first Session to ask');
    // Saved as waiting, not only asked: the kill below must find it there.
    await eventually(
      async () =>
        ((await red.admin('GET', '/channel-sessions/sessions?environment=goneEnv')).body as any[]).some(
          (x) => x.conversation === `${waiting}>${OURS}` && x.waitingAt?.nodeId === 'goneAsk',
        ),
      10000,
      'the first Session to be saved waiting',
    );
    const [kept] = folders();
    should.exist(kept);

    // Another first message; killed while its step sleeps after the download.
    const cut = '+15557100002';
    should((await postInbound(red, token, photo(cut))).status).equal(200);
    const orphan = await eventually(() => folders().find((f) => f !== kept), 5000, "the second Session's photo to be downloaded");
    await red.kill();
    anHourAgo(kept);
    anHourAgo(orphan);

    await red.relaunch();
    const line = await red.waitForLog(/removed the received files of \d+ Session/, 15000);
    should(line).match(/of 1 Session\(s\) no store knows/);
    await eventually(() => fake.messagesTo(cut).length === 1, 15000, 'the step to run again and ask');
    should(fake.messagesTo(cut).map((m) => m.Body)).eql(['Got 1 photo(s). Name?']);
    const now = folders();
    should(now).containEql(kept);
    should(now).not.containEql(orphan);
    should(now).have.length(2, "the live Session's folder and the one its step made again");
    should(readdirSync(join(red.userDir, 'channel-sessions', 'workspace', 'sessions', kept))).have.length(1, 'the waiting Session still has its photo');
  });
});
