import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import should from 'should';
import { downloadMedia } from '../../src/messaging/media-download';
import { downloadSlackFile } from '../../src/teamchat/inbound-files';
import { chain, tab, uid } from '../harness/flows';
import { NodeRed, eventually } from '../harness/node-red';
import { FakeTwilioMessagingApi, type MediaFault } from '../fakes/twilio-messaging-api';
import { ACCOUNT_SID, AUTH_TOKEN, inboundForm, messageSid, messagingEnvironment, postInbound, sessionWhen } from '../fakes/twilio-messaging-webhooks';
import { FakeSlack } from '../fakes/slack-api';
import { SlackEvents } from '../fakes/slack-events';
import { SIGNING_SECRET, helpDesk, teamchatEnvironment } from '../fakes/slack-flows';

const OURS = '+15550002000';
const MB = 1024 * 1024;
const PHOTO = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.from('the photo a person sent, '.repeat(400))]);

/**
 * A file a person sent survives one failed download: Twilio media (the account's media address,
 * then the CDN it redirects to) and Slack files, through a real Node-RED, with faults injected per
 * file in the fake providers. What is retried (429, 5xx, a reset, a body cut off, a timeout), what
 * is not (404, over the size limit, a redirect the token must not follow) and what the 4022 says.
 */
describe('file downloads: retries', function () {
  this.timeout(30000);
  let red: NodeRed;
  let twilio: FakeTwilioMessagingApi;
  let slack: FakeSlack;
  let events: SlackEvents;
  let user = 0;
  const twilioToken = 'tok-dl-' + uid();
  const slackToken = `tok${uid('t')}DDDDDDDDDDDDDDDDDDDD`;
  const authHeader = 'Basic ' + Buffer.from(`${ACCOUNT_SID}:${AUTH_TOKEN}`).toString('base64');

  before(async function () {
    twilio = await FakeTwilioMessagingApi.start(ACCOUNT_SID, AUTH_TOKEN);
    slack = await FakeSlack.start();
    red = await NodeRed.start();
    const z = uid('tab');
    const y = uid('tab');
    await red.deploy([
      messagingEnvironment('envDl', twilioToken, twilio, red),
      tab(z, 'SMS files'),
      ...chain(z, [
        ['telco-sms-start', 'dlStart', { environment: 'envDl' }],
        ['input-task', 'dlIn', { prompt: '', resultVariable: 'r' }],
        ['end-task', 'dlEnd'],
      ]),
      teamchatEnvironment('envSlackDl', slackToken, slack),
      tab(y, 'Slack files'),
      ...helpDesk(y, 'envSlackDl', { start: uid('s'), hello: uid('h'), ask: uid('a'), reply: uid('r'), end: uid('e') }),
    ]);
    events = new SlackEvents(red, slackToken, SIGNING_SECRET, slack.team);
  });
  after(async function () {
    await red?.close();
    await twilio?.close();
    await slack?.close();
  });

  function keptBytes(file: { path: string }): Buffer {
    return readFileSync(join(red.userDir, 'channel-sessions', 'workspace', ...file.path.split('/')));
  }

  /** Media the fake holds, with faults for its GETs on each leg. */
  function media(data: Buffer, type: string, faults: { media?: MediaFault[]; cdn?: MediaFault[] } = {}) {
    const sid = messageSid('MM');
    const mediaSid = `ME${uid()}`.padEnd(34, '0').slice(0, 34);
    const url = twilio.addMedia(sid, mediaSid, { data, type });
    if (faults.media) twilio.injectMedia(mediaSid, 'media', ...faults.media);
    if (faults.cdn) twilio.injectMedia(mediaSid, 'cdn', ...faults.cdn);
    return { sid, mediaSid, url, type };
  }

  /** An SMS with one file from a fresh number; the Session once it waits (the download is done by then). */
  async function sendMedia(m: { sid: string; url: string; type: string }): Promise<any> {
    const from = `+1555130${String(++user).padStart(4, '0')}`;
    const res = await postInbound(
      red,
      twilioToken,
      inboundForm(from, OURS, 'my photo', {
        MessageSid: m.sid,
        NumMedia: '1',
        MediaUrl0: m.url,
        MediaContentType0: m.type,
      }),
    );
    should(res.status).equal(200);
    return sessionWhen(red, 'envDl', from, OURS, (s) => s.waitingAt?.nodeId === 'dlIn', 'the Session to wait');
  }

  function warnings(session: any): string[] {
    return session.log.filter((e: any) => e.code === 4022).map((e: any) => e.message);
  }

  function arrived(session: any, data: Buffer): void {
    should(session.vars.message.text).equal('my photo');
    should(session.vars.message.files.count).equal(1, warnings(session).join('\n'));
    should(keptBytes(session.vars.message.files['0'])).eql(data);
    should(warnings(session)).eql([]);
  }

  describe('Twilio media', function () {
    it('a 503 from the media address is tried again: the flow gets the file, after exactly 2 GETs', async function () {
      const m = media(PHOTO, 'image/jpeg', { media: [{ status: 503 }] });
      arrived(await sendMedia(m), PHOTO);
      const gets = twilio.mediaGets(m.mediaSid, 'media');
      should(gets.length).equal(2);
      should(gets.map((g) => g.fault)).eql([{ status: 503 }, undefined]);
      should(gets.every((g) => g.authorization === authHeader)).be.true();
    });

    it('a connection reset on the media address is tried again: the file arrives, 2 GETs', async function () {
      const m = media(PHOTO, 'image/jpeg', { media: [{ reset: true }] });
      arrived(await sendMedia(m), PHOTO);
      should(twilio.mediaGets(m.mediaSid, 'media').length).equal(2);
    });

    it('a body cut off mid-way on the CDN is tried again: the whole file arrives, 2 CDN GETs', async function () {
      const m = media(PHOTO, 'image/jpeg', { cdn: [{ cutOff: true }] });
      arrived(await sendMedia(m), PHOTO);
      should(twilio.mediaGets(m.mediaSid, 'cdn').length).equal(2);
    });

    it("the CDN leg's 503 and reset are tried again, and the CDN never sees the Authorization header", async function () {
      const m = media(PHOTO, 'image/jpeg', { cdn: [{ status: 503 }, { reset: true }] });
      arrived(await sendMedia(m), PHOTO);
      const cdn = twilio.mediaGets(m.mediaSid, 'cdn');
      should(cdn.map((g) => g.fault)).eql([{ status: 503 }, { reset: true }, undefined]);
      should(cdn.every((g) => g.authorization === undefined)).be.true('no attempt carried the Authorization header to the CDN');
      const api = twilio.mediaGets(m.mediaSid, 'media');
      should(api.length).equal(3, 'each attempt starts at the media address, for a fresh CDN link');
      should(api.every((g) => g.authorization === authHeader)).be.true();
    });

    it('a 429 waits out its Retry-After, then the file arrives', async function () {
      const m = media(PHOTO, 'image/jpeg', { media: [{ status: 429, retryAfter: '1' }] });
      arrived(await sendMedia(m), PHOTO);
      const [first, second] = twilio.mediaGets(m.mediaSid, 'media');
      should(second.at - first.at).be.aboveOrEqual(950);
    });

    it('a 429 asking for longer than 10 s fails at once with 4022, one GET', async function () {
      const m = media(PHOTO, 'image/jpeg', { media: [{ status: 429, retryAfter: '30' }] });
      const session = await sendMedia(m);
      should(session.vars.message.files.count).equal(0);
      should(warnings(session)).eql([
        "file-1.jpg skipped: could not be downloaded: Twilio's media host answered HTTP 429 Too Many Requests and asked to wait 30 s, longer than the 10 s a download may wait; not tried again (1 attempt)",
      ]);
      should(twilio.mediaGets(m.mediaSid, 'media').length).equal(1);
    });

    it('a 404 is tried once and gives 4022; the text still arrives', async function () {
      const m = media(PHOTO, 'image/jpeg', { media: [{ status: 404 }] });
      const session = await sendMedia(m);
      should(session.vars.message.text).equal('my photo');
      should(session.vars.message.files.count).equal(0);
      should(warnings(session)).eql(["file-1.jpg skipped: could not be downloaded: Twilio's media host answered HTTP 404 Not Found"]);
      should(twilio.mediaGets(m.mediaSid, 'media').length).equal(1);
      should(twilio.mediaGets(m.mediaSid, 'cdn').length).equal(0);
    });

    it('three 503s give 4022 naming the status and the attempts', async function () {
      const m = media(PHOTO, 'image/jpeg', { media: [{ status: 503 }, { status: 503 }, { status: 503 }] });
      const session = await sendMedia(m);
      should(session.vars.message.files.count).equal(0);
      should(warnings(session)).eql([
        "file-1.jpg skipped: could not be downloaded: Twilio's media host answered HTTP 503 Service Unavailable after 3 attempts",
      ]);
      should(twilio.mediaGets(m.mediaSid, 'media').length).equal(3);
    });

    it('three resets on the CDN give 4022 naming the CDN and the attempts', async function () {
      const m = media(PHOTO, 'image/jpeg', { cdn: [{ reset: true }, { reset: true }, { reset: true }] });
      const session = await sendMedia(m);
      should(session.vars.message.files.count).equal(0);
      should(warnings(session)).have.length(1);
      should(warnings(session)[0]).match(
        /^file-1\.jpg skipped: could not be downloaded: the media CDN \(127\.0\.0\.1:\d+\) could not be reached: the connection was reset before it answered \((ECONNRESET|UND_ERR_SOCKET)\); 3 attempts$/,
      );
      should(twilio.mediaGets(m.mediaSid, 'cdn').length).equal(3);
    });

    it('a file over the size limit is not tried again', async function () {
      const big = Buffer.alloc(10 * MB + 1, 3);
      const m = media(big, 'image/jpeg');
      const session = await sendMedia(m);
      should(session.vars.message.files.count).equal(0);
      should(warnings(session)).eql([`file-1.jpg skipped: could not be downloaded: ${big.length} bytes, over the 10 MB limit per message`]);
      should(twilio.mediaGets(m.mediaSid, 'cdn').length).equal(1);
    });

    it('no answer within the attempt timeout is tried again; three give up, saying so', async function () {
      const once = media(PHOTO, 'image/jpeg', { media: [{ holdMs: 1500 }] });
      should(await downloadMedia(once.url, ACCOUNT_SID, AUTH_TOKEN, 400)).eql(PHOTO);
      should(twilio.mediaGets(once.mediaSid, 'media').length).equal(2);
      const stalled = media(PHOTO, 'image/jpeg', { cdn: [{ holdMs: 1500 }, { holdMs: 1500 }, { holdMs: 1500 }] });
      const started = Date.now();
      const err = await downloadMedia(stalled.url, ACCOUNT_SID, AUTH_TOKEN, 400).then(
        () => undefined,
        (e: Error) => e,
      );
      should(err?.message).match(/^no answer from the media CDN \(127\.0\.0\.1:\d+\) within 0\.4 s; 3 attempts$/);
      should(twilio.mediaGets(stalled.mediaSid, 'cdn').length).equal(3);
      should(Date.now() - started).be.below(3 * 400 + 2 * 500 + 1000, 'bounded by 3 attempt timeouts and 2 backoffs');
    });

    it('a body trickling in for longer than an attempt may take is cut at the attempt timeout, though it never stalls', async function () {
      const m = media(PHOTO, 'image/jpeg', { cdn: [{ trickleMs: 150 }, { trickleMs: 150 }, { trickleMs: 150 }] });
      const err = await downloadMedia(m.url, ACCOUNT_SID, AUTH_TOKEN, 600).then(
        () => undefined,
        (e: Error) => e,
      );
      should(err?.message).match(/^the media CDN \(127\.0\.0\.1:\d+\) did not send the whole file within 0\.6 s; 3 attempts$/);
      should(twilio.mediaGets(m.mediaSid, 'cdn').length).equal(3);
    });
  });

  describe('Slack files', function () {
    function slackFile(name: string, data: Buffer, type: string) {
      const url = slack.addFile(name, data, type);
      return {
        url,
        file: { id: `F${uid()}`, name, title: name, mimetype: type, size: data.length, mode: 'hosted', url_private: url, url_private_download: url },
      };
    }

    /** A direct message opening a Session with these files; the Session once it waits. */
    async function open(files: Array<Record<string, unknown>>): Promise<any> {
      const event = events.direct('U0FILES', 'with a file', { subtype: 'file_share', files });
      should((await events.post(events.envelope(event))).status).equal(200);
      return eventually(
        async () => {
          const list = (await red.admin('GET', '/channel-sessions/sessions?environment=envSlackDl&ended=true')).body as any[];
          const s = list.find((x) => x.conversation === `${String(event.channel)}/${String(event.ts)}` && x.state === 'waiting');
          return s && (await red.admin('GET', `/channel-sessions/sessions/${s.id}`)).body;
        },
        8000,
        'the Slack Session to wait',
      );
    }

    it('a file whose first GET answered 503 arrives, after exactly 2 GETs with the bot token', async function () {
      const { url, file } = slackFile('photo.jpg', PHOTO, 'image/jpeg');
      slack.injectFile(url, { status: 503 });
      const s = await open([file]);
      should(warnings(s)).eql([]);
      should(s.vars.teamchat.files.count).equal(1);
      should(keptBytes(s.vars.teamchat.files['0'])).eql(PHOTO);
      const gets = slack.fileGets(url);
      should(gets.map((g) => g.fault)).eql([{ status: 503 }, undefined]);
      should(gets.every((g) => g.token === slack.botToken)).be.true();
    });

    it('a body cut off mid-way is tried again; three 503s give 4022 naming the status and attempts', async function () {
      const cut = slackFile('cut.jpg', PHOTO, 'image/jpeg');
      slack.injectFile(cut.url, { cutOff: true });
      const failing = slackFile('down.pdf', Buffer.from('%PDF-1.4'), 'application/pdf');
      slack.injectFile(failing.url, { status: 503 }, { status: 503 }, { status: 503 });
      const s = await open([cut.file, failing.file]);
      should(s.vars.teamchat.files.names).equal('cut.jpg');
      should(keptBytes(s.vars.teamchat.files['0'])).eql(PHOTO);
      should(slack.fileGets(cut.url).length).equal(2);
      should(warnings(s)).eql(["down.pdf skipped: could not be downloaded: Slack's file host answered HTTP 503 Service Unavailable after 3 attempts"]);
      should(slack.fileGets(failing.url).length).equal(3);
    });

    it("a redirect off Slack's hosts is not followed, nor tried again", async function () {
      const url = slack.addRedirect('moved.png', 'http://127.0.0.1:9/moved.png');
      const s = await open([{ id: 'F0MOVED', name: 'moved.png', mimetype: 'image/png', size: 10, mode: 'hosted', url_private_download: url }]);
      should(warnings(s)).eql(['moved.png skipped: could not be downloaded: refused to send the bot token to http://127.0.0.1:9']);
      should(slack.fileGets(url).length).equal(1);
    });

    it('no answer within the attempt timeout three times gives up, saying so', async function () {
      const { url } = slackFile('slow.jpg', PHOTO, 'image/jpeg');
      slack.injectFile(url, { holdMs: 1500 }, { holdMs: 1500 }, { holdMs: 1500 });
      const err = await downloadSlackFile(url, slack.botToken, [slack.origin], 400).then(
        () => undefined,
        (e: Error) => e,
      );
      should(err?.message).equal("no answer from Slack's file host within 0.4 s; 3 attempts");
      should(slack.fileGets(url).length).equal(3);
    });
  });
});
