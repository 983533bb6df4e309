import { cpSync, existsSync, readdirSync, utimesSync } from 'node:fs';
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
 * node; Node-RED is killed there. After the restart the step runs again and opens the Session anew
 * with the same id (a re-run keeps its keys, for the effects journal), so the first attempt's folder
 * is its folder again and holds the photo once. A folder of a Session no store knows (its Session
 * gone with a database that was replaced, say) is removed at the start.
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

  it('removes, after a restart, the folder of a Session no store knows; a step that ran again keeps its own, with the photo once', async function () {
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
    const rerun = await eventually(() => folders().find((f) => f !== kept), 5000, "the second Session's photo to be downloaded");
    await red.kill();
    // A folder no Session of any store owns, as one left by a Session whose database was replaced.
    const sessions = join(red.userDir, 'channel-sessions', 'workspace', 'sessions');
    const orphan = kept.replace(/[0-9a-f]/g, (c) => ((parseInt(c, 16) + 1) % 16).toString(16));
    cpSync(join(sessions, kept), join(sessions, orphan), { recursive: true });
    for (const id of [kept, rerun, orphan]) anHourAgo(id);

    await red.relaunch();
    const line = await red.waitForLog(/removed the received files of \d+ Session/, 15000);
    should(line).match(/of 1 Session\(s\) no store knows/);
    await eventually(() => fake.messagesTo(cut).length === 1, 15000, 'the step to run again and ask');
    should(fake.messagesTo(cut).map((m) => m.Body)).eql(['Got 1 photo(s). Name?']);
    should(folders()).eql([kept, rerun].sort());
    should(readdirSync(join(sessions, kept))).have.length(1, 'the waiting Session still has its photo');
    should(readdirSync(join(sessions, rerun))).have.length(1, 'the step that ran again has its photo once');
  });
});
