import { createHmac } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import should from 'should';
import { chain, node, tab, uid } from '../harness/flows';
import { NodeRed, eventually, request } from '../harness/node-red';
import { FakeTwilioMessagingApi } from '../fakes/twilio-messaging-api';
import { ACCOUNT_SID, AUTH_TOKEN, inboundForm, messageSid, messagingEnvironment, postInbound, sessionWhen } from '../fakes/twilio-messaging-webhooks';

const OURS = '+15550001000';
const WA_OURS = 'whatsapp:+14155238886';
const MB = 1024 * 1024;

const JPEG = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.from('a small jpeg')]);
const PDF = Buffer.from('%PDF-1.4 a small pdf');

/** Files both ways: inbound media download rules, outbound media and links on both Channels. */
describe('messaging files', function () {
  let red: NodeRed;
  let fake: FakeTwilioMessagingApi;
  const token = 'tok-files-' + uid();
  const noBaseToken = 'tok-nobase-' + uid();
  const manyToken = 'tok-many-' + uid();
  const twoToken = 'tok-two-' + uid();
  const filesOnlyToken = 'tok-fonly-' + uid();
  const tenToken = 'tok-ten-' + uid();
  const tenNames = Array.from({ length: 10 }, (_, i) => `delivery-note-${i + 1}-signed-copy.pdf`);
  const authHeader = 'Basic ' + Buffer.from(`${ACCOUNT_SID}:${AUTH_TOKEN}`).toString('base64');

  before(async function () {
    fake = await FakeTwilioMessagingApi.start(ACCOUNT_SID, AUTH_TOKEN);
    red = await NodeRed.start();
    const z = uid('tab');
    const y = uid('tab');
    const echo = (prefix: string, env: string): Array<[string, string, Record<string, unknown>?]> => [
      [prefix === 'sms' ? 'telco-sms-start' : 'telco-messenger-start', `${prefix}Start${env}`, { environment: env }],
      ['output-task', `${prefix}Echo${env}`, { text: '{message.text}', attachments: 'ref-session:message.files' }],
      ['input-task', `${prefix}In${env}`, { prompt: '', resultVariable: 'r', filesVariable: 'docs' }],
      ['output-task', `${prefix}Kept${env}`, { text: 'kept {docs.count}: {docs.names}' }],
      ['end-task', `${prefix}End${env}`],
    ];
    await red.deploy([
      messagingEnvironment('envF', token, fake, red),
      messagingEnvironment('envN', noBaseToken, fake, red, { publicBaseUrl: '' }),
      tab(z, 'Files'),
      ...chain(z, echo('sms', 'envF')),
      ...chain(z, echo('wa', 'envF')),
      tab(y, 'No base'),
      ...chain(y, echo('sms', 'envN')),
      ...chain(y, echo('wa', 'envN')),
      messagingEnvironment('envMany', manyToken, fake, red),
      tab('tabMany', 'Many'),
      ...chain('tabMany', [
        ['telco-sms-start', 'manyStart', { environment: 'envMany' }],
        ['output-task', 'manyOut', { text: 'files', attachments: Array.from({ length: 11 }, (_, i) => `ref-storage:f${i + 1}.pdf`).join(', ') }],
        ['end-task', 'manyEnd'],
      ]),
      messagingEnvironment('envFilesOnly', filesOnlyToken, fake, red, { publicBaseUrl: '' }),
      tab('tabFilesOnly', 'Files only, no base'),
      ...chain(
        'tabFilesOnly',
        [
          ['telco-sms-start', 'foStart', { environment: 'envFilesOnly' }],
          ['output-task', 'foOut', { text: '', attachments: 'ref-session:message.files' }],
          ['input-task', 'foWait', { prompt: '', resultVariable: 'r' }],
          ['end-task', 'foEnd'],
        ],
        { foOut: [['foWait'], ['foErr']] },
      ),
      node('change', 'foErr', 'tabFilesOnly', { rules: [{ t: 'set', p: 'vars.err', pt: 'msg', to: 'error', tot: 'msg' }] }, [['foWait']]),
      messagingEnvironment('envTen', tenToken, fake, red),
      tab('tabTen', 'Ten links'),
      ...chain('tabTen', [
        ['telco-sms-start', 'tenStart', { environment: 'envTen' }],
        ['output-task', 'tenOut', { text: 'Your ten delivery notes:', attachments: tenNames.map((n) => `ref-storage:${n}`).join(', ') }],
        ['input-task', 'tenWait', { prompt: '', resultVariable: 'r' }],
        ['end-task', 'tenEnd'],
      ]),
      messagingEnvironment('envTwo', twoToken, fake, red),
      tab('tabTwo', 'Two replies'),
      ...chain('tabTwo', [
        ['telco-sms-start', 'twoStart', { environment: 'envTwo' }],
        ['input-task', 'twoA', { prompt: 'first photo?', resultVariable: 'ta', filesVariable: 'a' }],
        ['input-task', 'twoB', { prompt: 'second photo?', resultVariable: 'tb', filesVariable: 'b' }],
        ['input-task', 'twoDone', { prompt: '', resultVariable: 'tc' }],
        ['end-task', 'twoEnd'],
      ]),
    ]);
  });
  after(async function () {
    await red?.close();
    await fake?.close();
  });

  /** An inbound message with media held by the fake provider. */
  function withMedia(from: string, to: string, body: string, media: Array<{ data: Buffer; type: string; url?: string }>) {
    const sid = messageSid('MM');
    const extra: Record<string, string> = { MessageSid: sid, NumMedia: String(media.length) };
    media.forEach((m, i) => {
      extra[`MediaUrl${i}`] = m.url ?? fake.addMedia(sid, `ME${uid()}${i}`.padEnd(34, '0'), m);
      extra[`MediaContentType${i}`] = m.type;
    });
    return inboundForm(from, to, body, extra);
  }

  function keptBytes(file: { path: string }): Buffer {
    return readFileSync(join(red.userDir, 'channel-sessions', 'workspace', ...file.path.split('/')));
  }

  it('downloads inbound media with basic auth, follows the CDN redirect without it, names files by position and type', async function () {
    const user = 'whatsapp:+447700900101';
    const form = withMedia(user, WA_OURS, 'two files', [
      { data: JPEG, type: 'image/jpeg' },
      { data: PDF, type: 'application/pdf' },
    ]);
    const before = fake.cdnRequests.length;
    await postInbound(red, token, form);
    const session = await sessionWhen(red, 'envF', user, WA_OURS, (s) => s.waitingAt?.nodeId === 'waInenvF', 'the Session');
    const files = session.vars.message.files;
    should(files.count).equal(2);
    should(files.names).equal('file-1.jpg, file-2.pdf');
    should([files['0'].type, files['1'].type]).eql(['image/jpeg', 'application/pdf']);
    should(keptBytes(files['0'])).eql(JPEG);
    should(keptBytes(files['1'])).eql(PDF);
    const mediaCalls = fake.requests.filter((r) => r.path.includes('/Media/') && r.path.includes(form.MessageSid));
    should(mediaCalls.length).equal(2);
    should(mediaCalls.every((r) => r.authorization === authHeader)).be.true('the provider media address gets basic auth');
    const cdn = fake.cdnRequests.slice(before);
    should(cdn.length).equal(2, 'both redirects followed');
    should(cdn.every((r) => r.authorization === undefined)).be.true('the CDN never sees the Authorization header');
    should(session.history[0].files).eql(['file-1.jpg', 'file-2.pdf']);
  });

  it("keeps each message's files apart: a later reply's file-1.jpg does not overwrite an earlier one's", async function () {
    const user = '+15551200009';
    const first = Buffer.concat([JPEG, Buffer.from(' the first photo')]);
    const second = Buffer.concat([JPEG, Buffer.from(' the second, another photo')]);
    await postInbound(red, twoToken, inboundForm(user, OURS, 'hi'));
    await sessionWhen(red, 'envTwo', user, OURS, (s) => s.waitingAt?.nodeId === 'twoA', 'the first InputTask');
    await postInbound(red, twoToken, withMedia(user, OURS, 'one', [{ data: first, type: 'image/jpeg' }]));
    await sessionWhen(red, 'envTwo', user, OURS, (s) => s.waitingAt?.nodeId === 'twoB', 'the second InputTask');
    await postInbound(red, twoToken, withMedia(user, OURS, 'two', [{ data: second, type: 'image/jpeg' }]));
    // Read while the Session waits: its files are freed when it ends.
    const session = await sessionWhen(red, 'envTwo', user, OURS, (s) => s.waitingAt?.nodeId === 'twoDone', 'the last InputTask');
    const { a, b } = session.vars;
    should([a.names, b.names]).eql(['file-1.jpg', 'file-1.jpg'], 'each named by its position in its own message');
    should(keptBytes(a['0'])).eql(first, "the first reply's photo is still its own");
    should(keptBytes(b['0'])).eql(second);
  });

  it("ignores media URLs that are not the account's own media address with a 4022 warning; the text still arrives", async function () {
    const user = 'whatsapp:+447700900102';
    const otherAccount = fake.addMedia('MM' + '1'.repeat(32), 'ME' + '2'.repeat(32), { data: JPEG, type: 'image/jpeg' }, 'AC' + 'f'.repeat(32));
    const foreignHost = `${fake.cdnUrl}/2010-04-01/Accounts/${ACCOUNT_SID}/Messages/MM${'3'.repeat(32)}/Media/ME${'4'.repeat(32)}`;
    const form = withMedia(user, WA_OURS, 'beware', [
      { data: JPEG, type: 'image/jpeg', url: otherAccount },
      { data: JPEG, type: 'image/jpeg', url: foreignHost },
      { data: PDF, type: 'application/pdf' },
    ]);
    const before = fake.requests.length;
    const cdnBefore = fake.cdnRequests.length;
    await postInbound(red, token, form);
    const session = await sessionWhen(red, 'envF', user, WA_OURS, (s) => s.waitingAt?.nodeId === 'waInenvF', 'the Session');
    should(session.vars.message.text).equal('beware');
    should(session.vars.message.files.count).equal(1);
    should(session.vars.message.files['0'].name).equal('file-3.pdf');
    const warnings = session.log.filter((e: any) => e.code === 4022).map((e: any) => e.message);
    should(warnings.length).equal(2, warnings.join('\n'));
    should(warnings[0]).match(/^file-1\.jpg skipped: its media URL is not the provider's media address for this account/);
    should(warnings[1]).match(/^file-2\.jpg skipped/);
    should(fake.requests.slice(before).filter((r) => r.path.includes('AC' + 'f'.repeat(32))).length).equal(0);
    should(fake.cdnRequests.slice(cdnBefore).filter((r) => r.path.includes('/2010-04-01/')).length).equal(0, 'the foreign host got nothing');
  });

  it('keeps at most 5 files and 10 MB per message, skipping the rest with 4022', async function () {
    const user = '+15551200001';
    const six = Array.from({ length: 6 }, () => ({ data: PDF, type: 'application/pdf' }));
    await postInbound(red, token, withMedia(user, OURS, 'six', six));
    const first = await sessionWhen(red, 'envF', user, OURS, (s) => s.waitingAt?.nodeId === 'smsInenvF', 'the Session');
    should(first.vars.message.files.count).equal(5);
    should(first.log.find((e: any) => e.code === 4022).message).match(/^file-6\.pdf skipped: at most 5 files/);
    const big = Buffer.alloc(6 * MB, 1);
    await postInbound(
      red,
      token,
      withMedia(user, OURS, 'big', [
        { data: big, type: 'image/jpeg' },
        { data: big, type: 'image/jpeg' },
      ]),
    );
    const done = await sessionWhen(red, 'envF', user, OURS, (s) => s.state === 'completed', 'the InputTask files');
    should(done.vars.r).equal('big');
    should(done.vars.docs.count).equal(1, 'Store files in keeps the files of the reply');
    should(done.log.some((e: any) => e.code === 4022 && /^file-2\.jpg skipped: over the 10 MB limit/.test(e.message))).be.true();
    should(fake.messagesTo(user).at(-1)?.Body).equal('kept 1: file-1.jpg');
  });

  it('messenger: a first image carries the text as caption; each file goes in its own message', async function () {
    const user = 'whatsapp:+447700900103';
    await postInbound(
      red,
      token,
      withMedia(user, WA_OURS, 'see these', [
        { data: JPEG, type: 'image/jpeg' },
        { data: PDF, type: 'application/pdf' },
      ]),
    );
    const session = await sessionWhen(red, 'envF', user, WA_OURS, (s) => s.waitingAt?.nodeId === 'waInenvF', 'the Session');
    should(session.vars.message.files.names).equal('file-1.jpg, file-2.pdf', JSON.stringify(session.log));
    const sent = fake.messagesTo(user);
    should(sent.length).equal(2);
    should(sent[0].Body).equal('see these');
    should(sent[0].From).equal(WA_OURS);
    should(sent[1].Body).equal(undefined);
    const [imageUrl, pdfUrl] = [String(sent[0].MediaUrl), String(sent[1].MediaUrl)];
    should(imageUrl).match(new RegExp(`^${red.url('/api/TelcoModule/Messaging/media/')}`));
    const image = await fetch(imageUrl);
    should(image.status).equal(200);
    should(image.headers.get('content-type')).equal('image/jpeg');
    should(Buffer.from(await image.arrayBuffer())).eql(JPEG);
    should(Buffer.from(await (await fetch(pdfUrl)).arrayBuffer())).eql(PDF);
    const ttl = Number(imageUrl.split('/').pop()!.split('.')[1]) - Date.now() / 1000;
    should(Math.abs(ttl - 86400)).be.below(120, `messenger links live 1 day (${ttl})`);
    const said = session.history.find((h: any) => h.from === 'bot');
    should([said.text, said.files]).eql(['see these', ['file-1.jpg', 'file-2.pdf']], 'history keeps text and names, not links');
  });

  it('messenger: a first document means the text goes alone first; unsupported or oversized files go as links', async function () {
    const user = 'whatsapp:+447700900104';
    const bigImage = Buffer.alloc(5 * MB + 1, 2);
    await postInbound(
      red,
      token,
      withMedia(user, WA_OURS, 'docs', [
        { data: PDF, type: 'application/pdf' },
        { data: Buffer.from('PK zip'), type: 'application/zip' },
        { data: bigImage, type: 'image/jpeg' },
      ]),
    );
    await sessionWhen(red, 'envF', user, WA_OURS, (s) => s.waitingAt?.nodeId === 'waInenvF', 'the Session');
    const sent = fake.messagesTo(user);
    should(sent.length).equal(4);
    should(sent[0]).eql({ To: user, From: WA_OURS, Body: 'docs', StatusCallback: red.url('/api/TelcoModule/Messaging/status/' + token) });
    should(sent[1].Body).equal(undefined);
    should(String(sent[1].MediaUrl)).match(/\/media\//);
    should(String(sent[2].Body)).match(/^file-2\.zip: http:\/\/127\.0\.0\.1:\d+\/api\/TelcoModule\/Messaging\/media\/\S+$/);
    should(sent[2].MediaUrl).equal(undefined);
    should(String(sent[3].Body)).match(/^file-3\.jpg: http/, 'an image over 5 MB goes as a link');
  });

  it('SMS: the text then one "<name>: <link>" line per file, links valid 7 days', async function () {
    const user = '+15551200002';
    await postInbound(
      red,
      token,
      withMedia(user, OURS, 'your files', [
        { data: JPEG, type: 'image/jpeg' },
        { data: PDF, type: 'application/pdf' },
      ]),
    );
    const [sent] = await eventually(() => fake.messagesTo(user).length === 1 && fake.messagesTo(user), 8000, 'the SMS');
    const lines = String(sent.Body).split('\n');
    should(lines[0]).equal('your files');
    should(lines[1]).match(/^file-1\.jpg: http:\/\/127\.0\.0\.1:\d+\/api\/TelcoModule\/Messaging\/media\/[0-9a-f]{32}\.\d+\.[\w-]{43}$/);
    should(lines[2]).match(/^file-2\.pdf: /);
    should(sent.MediaUrl).equal(undefined, 'SMS always sends links');
    const link = lines[2].slice('file-2.pdf: '.length);
    const ttl = Number(link.split('/').pop()!.split('.')[1]) - Date.now() / 1000;
    should(Math.abs(ttl - 7 * 86400)).be.below(120, `SMS links live 7 days (${ttl})`);
    // The link outlives the Session: finish it, its own files are freed, the link still serves.
    await postInbound(red, token, inboundForm(user, OURS, 'done'));
    await sessionWhen(red, 'envF', user, OURS, (s) => s.state === 'completed', 'the Session to end');
    const res = await fetch(link);
    should(res.status).equal(200);
    should(res.headers.get('content-type')).equal('application/pdf');
    should(Buffer.from(await res.arrayBuffer())).eql(PDF);
  });

  it("SMS: ten links over Twilio's 1600-character Body limit go in as many messages as they need, in order, the text first", async function () {
    const storage = join(red.userDir, 'channel-sessions', 'storage');
    mkdirSync(storage, { recursive: true });
    tenNames.forEach((name, i) => writeFileSync(join(storage, name), Buffer.concat([PDF, Buffer.from(` note ${i + 1}`)])));
    const user = '+15551200007';
    await postInbound(red, tenToken, inboundForm(user, OURS, 'my notes?'));
    const session = await sessionWhen(red, 'envTen', user, OURS, (s) => s.waitingAt?.nodeId === 'tenWait' || s.state === 'ended', 'the Output');
    should(session.waitingAt?.nodeId).equal('tenWait', JSON.stringify(session.log));
    should(
      fake
        .attemptsTo(user)
        .filter((r) => r.refused)
        .map((r) => r.refused),
    ).eql([], 'no message refused');
    const bodies = fake.messagesTo(user).map((m) => String(m.Body));
    should(bodies.length).be.above(1);
    for (const body of bodies) should(body.length).not.be.above(1600);
    const lines = bodies.flatMap((b) => b.split('\n'));
    should(lines[0]).equal('Your ten delivery notes:');
    should(lines.slice(1).map((l) => l.split(': ')[0])).eql(tenNames, 'every link, in order');
    for (const [i, line] of lines.slice(1).entries()) {
      const res = await fetch(line.slice(line.indexOf(': ') + 2));
      should(Buffer.from(await res.arrayBuffer()).toString()).endWith(` note ${i + 1}`);
    }
    const said = session.history.filter((h: any) => h.from === 'bot');
    should(said.map((h: any) => [h.text, h.files])).eql([['Your ten delivery notes:', tenNames]], 'one Output, one history line');
  });

  it('serves links only with a valid signature (403) and before expiry (410)', async function () {
    const user = '+15551200003';
    await postInbound(red, token, withMedia(user, OURS, 'x', [{ data: PDF, type: 'application/pdf' }]));
    const [sent] = await eventually(() => fake.messagesTo(user).length === 1 && fake.messagesTo(user), 8000, 'the SMS');
    const link = String(sent.Body)
      .split('\n')[1]
      .replace(/^file-1\.pdf: /, '');
    const token_ = link.split('/').pop()!;
    const [id, expiry, signature] = token_.split('.');
    const base = link.slice(0, -token_.length);
    const forged = signature.slice(0, -1) + (signature.endsWith('A') ? 'B' : 'A');
    should((await request(base + `${id}.${expiry}.${forged}`, 'GET')).status).equal(403);
    should((await request(base + `${id}.${Number(expiry) + 100}.${signature}`, 'GET')).status).equal(403, 'a longer expiry breaks the signature');
    should((await request(base + 'not-a-link', 'GET')).status).equal(403);
    const secret = Buffer.from(readFileSync(join(red.userDir, 'channel-sessions', 'messaging-media', '.link-secret'), 'utf8'), 'base64');
    const past = Math.floor(Date.now() / 1000) - 60;
    const expired = `${id}.${past}.${createHmac('sha256', secret).update(`${id}.${past}`).digest('base64url')}`;
    should((await request(base + expired, 'GET')).status).equal(410);
    should((await request(link, 'GET')).status).equal(200);
  });

  it('without a public base URL: messenger files stop the step with 4008, nothing sent', async function () {
    const user = 'whatsapp:+447700900105';
    await postInbound(red, noBaseToken, withMedia(user, WA_OURS, 'pic', [{ data: JPEG, type: 'image/jpeg' }]));
    const ended = await sessionWhen(red, 'envN', user, WA_OURS, (s) => s.state === 'ended', 'the Session to end');
    should(ended.error.code).equal(4008);
    should(ended.error.message).match(/public base URL/);
    should(fake.messagesTo(user).length).equal(0);
  });

  it('without a public base URL: SMS files are left out with 4022 and the text goes alone', async function () {
    const user = '+15551200004';
    await postInbound(red, noBaseToken, withMedia(user, OURS, 'only text', [{ data: PDF, type: 'application/pdf' }]));
    const session = await sessionWhen(red, 'envN', user, OURS, (s) => s.waitingAt?.nodeId === 'smsInenvN', 'the Session');
    should(fake.messagesTo(user).map((m) => m.Body)).eql(['only text']);
    should(session.log.find((e: any) => e.code === 4022).message).match(/^file-1\.pdf left out: links need the public base URL/);
    const said = session.history.filter((h: any) => h.from === 'bot');
    should(said.map((h: any) => [h.text, h.files])).eql([['only text', undefined]], 'the history does not list the files left out as sent');
  });

  it('without a public base URL: an SMS Output with only files sends nothing and takes its error branch with 4022', async function () {
    const user = '+15551200006';
    await postInbound(red, filesOnlyToken, withMedia(user, OURS, '', [{ data: PDF, type: 'application/pdf' }]));
    const session = await sessionWhen(red, 'envFilesOnly', user, OURS, (s) => s.waitingAt?.nodeId === 'foWait', 'the Session');
    should(session.vars.err).containEql({ code: 4022, name: 'ModuleLogWarning' });
    should(session.vars.err.message).match(
      /^file-1\.pdf left out: links need the public base URL of the messaging Environment "env envFilesOnly"; nothing was sent$/,
    );
    should(fake.messagesTo(user)).eql([]);
    should(session.history.filter((h: any) => h.from === 'bot')).eql([], 'nothing was said');
  });

  it('refuses more than 10 outbound files with 3005 before sending', async function () {
    const storage = join(red.userDir, 'channel-sessions', 'storage');
    mkdirSync(storage, { recursive: true });
    for (let i = 1; i <= 11; i++) writeFileSync(join(storage, `f${i}.pdf`), PDF);
    const user = '+15551200005';
    await postInbound(red, manyToken, inboundForm(user, OURS, 'send them'));
    const ended = await sessionWhen(red, 'envMany', user, OURS, (s) => s.state === 'ended', 'the Session to end');
    should(ended.error.code).equal(3005);
    should(ended.error.message).match(/11 files, at most 10/);
    should(fake.messagesTo(user).length).equal(0);
  });
});
