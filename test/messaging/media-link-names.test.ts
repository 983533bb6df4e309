import 'should';
import { parse } from 'content-disposition';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { chain, tab, uid } from '../harness/flows';
import { NodeRed, eventually } from '../harness/node-red';
import { FakeTwilioMessagingApi } from '../fakes/twilio-messaging-api';
import { ACCOUNT_SID, AUTH_TOKEN, inboundForm, messagingEnvironment, postInbound } from '../fakes/twilio-messaging-webhooks';

const OURS = '+15550001000';
const NAMES = ['résumé-файл.pdf', 'plain.pdf', 'say "hi" \\ there.pdf', '報告書.txt'];

/**
 * The media links the provider fetches (and SMS users open) for files with any name: the
 * Content-Disposition header carries the name (RFC 6266 `filename*`), and a failure is logged.
 */
describe('messaging media links: file names and failures', function () {
  let red: NodeRed;
  let fake: FakeTwilioMessagingApi;
  const token = 'tok-names-' + uid();

  before(async function () {
    fake = await FakeTwilioMessagingApi.start(ACCOUNT_SID, AUTH_TOKEN);
    red = await NodeRed.start();
    const storage = join(red.userDir, 'channel-sessions', 'storage');
    mkdirSync(storage, { recursive: true });
    for (const name of NAMES) writeFileSync(join(storage, name), `the bytes of ${name}`);
    await red.deploy([
      messagingEnvironment('envNames', token, fake, red),
      tab('pNames', 'Names'),
      ...chain('pNames', [
        ['telco-sms-start', 'nStart', { environment: 'envNames' }],
        ['output-task', 'nOut', { text: 'your files', attachments: NAMES.map((n) => `ref-storage:${n}`).join(', ') }],
        ['end-task', 'nEnd'],
      ]),
    ]);
  });
  after(async function () {
    await red?.close();
    await fake?.close();
  });

  /** The SMS lists `<name>: <link>` per file; sends one and returns the links by name. */
  async function linksFor(user: string): Promise<Map<string, string>> {
    (await postInbound(red, token, inboundForm(user, OURS, 'send'))).status.should.equal(200);
    const [sms] = await eventually(() => fake.messagesTo(user).length === 1 && fake.messagesTo(user), 8000, 'the SMS');
    const lines = String(sms.Body).split('\n').slice(1);
    return new Map(
      lines.map((line) => {
        const at = line.lastIndexOf(': http');
        return [line.slice(0, at), line.slice(at + 2)];
      }),
    );
  }

  it('serves every file, whatever its name, with the name in Content-Disposition', async function () {
    const links = await linksFor('+15551240001');
    [...links.keys()].should.eql(NAMES);
    for (const name of NAMES) {
      const res = await fetch(links.get(name)!);
      res.status.should.equal(200, name);
      const disposition = parse(res.headers.get('content-disposition')!);
      disposition.type.should.equal('inline');
      disposition.parameters.filename.should.equal(name);
      (await res.text()).should.equal(`the bytes of ${name}`);
    }
  });

  it("logs a link that cannot be served and answers 500, without the link's signature", async function () {
    const links = await linksFor('+15551240002');
    const link = links.get('plain.pdf')!;
    const file = link.split('/').pop()!;
    const id = file.split('.')[0];
    // The kept copy became unreadable after the link was made (here: a directory in its place).
    const kept = join(red.userDir, 'channel-sessions', 'messaging-media', `${id}.bin`);
    rmSync(kept);
    mkdirSync(kept);
    const res = await fetch(link);
    res.status.should.equal(500);
    const line = await red.waitForLog(new RegExp(`media link ${id} could not be served`));
    line.should.match(/\[error\]/);
    line.should.not.containEql(file.split('.')[2]);
  });
});

/**
 * A file whose type a browser runs (a web page, an SVG drawing) is served from the same origin as
 * the editor (httpNodeRoot and httpAdminRoot share the host by default): shown inline, its scripts
 * would run there, with the editor's login at hand. Such files are downloads, never shown.
 */
describe('messaging media links: files a browser would run', function () {
  let red: NodeRed;
  let fake: FakeTwilioMessagingApi;
  const token = 'tok-active-' + uid();
  const FILES = ['page.html', 'drawing.svg', 'photo.png', 'notes.txt'];

  before(async function () {
    fake = await FakeTwilioMessagingApi.start(ACCOUNT_SID, AUTH_TOKEN);
    red = await NodeRed.start();
    const storage = join(red.userDir, 'channel-sessions', 'storage');
    mkdirSync(storage, { recursive: true });
    writeFileSync(join(storage, 'page.html'), '<script>parent.localStorage</script>');
    writeFileSync(join(storage, 'drawing.svg'), '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>');
    writeFileSync(join(storage, 'photo.png'), 'png bytes');
    writeFileSync(join(storage, 'notes.txt'), 'plain text');
    await red.deploy([
      messagingEnvironment('envActive', token, fake, red),
      tab('pActive', 'Active'),
      ...chain('pActive', [
        ['telco-sms-start', 'nActStart', { environment: 'envActive' }],
        ['output-task', 'nActOut', { text: 'your files', attachments: FILES.map((n) => `ref-storage:${n}`).join(', ') }],
        ['end-task', 'nActEnd'],
      ]),
    ]);
  });
  after(async function () {
    await red?.close();
    await fake?.close();
  });

  it('serves web pages and SVG as downloads, never inline, and tells browsers not to guess types', async function () {
    const user = '+15551240101';
    (await postInbound(red, token, inboundForm(user, OURS, 'send'))).status.should.equal(200);
    const [sms] = await eventually(() => fake.messagesTo(user).length === 1 && fake.messagesTo(user), 8000, 'the SMS');
    const links = new Map(
      String(sms.Body)
        .split('\n')
        .slice(1)
        .map((line) => [line.slice(0, line.lastIndexOf(': http')), line.slice(line.lastIndexOf(': http') + 2)]),
    );
    const shown: Record<string, string> = {};
    for (const name of FILES) {
      const res = await fetch(links.get(name)!);
      res.status.should.equal(200, name);
      (res.headers.get('x-content-type-options') ?? '').should.equal('nosniff', name);
      shown[name] = parse(res.headers.get('content-disposition')!).type;
    }
    shown.should.eql({ 'page.html': 'attachment', 'drawing.svg': 'attachment', 'photo.png': 'inline', 'notes.txt': 'inline' });
  });
});
