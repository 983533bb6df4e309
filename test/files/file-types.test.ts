import 'should';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { chain, tab, uid } from '../harness/flows';
import { NodeRed, eventually } from '../harness/node-red';
import { FakeTwilioMessagingApi } from '../fakes/twilio-messaging-api';
import { ACCOUNT_SID, AUTH_TOKEN, inboundForm, messageSid, messagingEnvironment, postInbound, sessionWhen } from '../fakes/twilio-messaging-webhooks';

const WA_OURS = 'whatsapp:+14155238886';

/** Every type SPEC 4.4 names for the messenger, as the provider labels it, and the name a user expects. */
const SPEC_TYPES: Array<[type: string, name: string]> = [
  ['image/jpeg', 'jpg'],
  ['image/png', 'png'],
  ['audio/ogg; codecs=opus', 'ogg'],
  ['audio/amr', 'amr'],
  ['video/3gpp', '3gp'],
  ['audio/aac', 'aac'],
  ['audio/mpeg', 'mp3'],
  ['video/mp4', 'mp4'],
  ['application/pdf', 'pdf'],
  ['application/msword', 'doc'],
  ['application/vnd.openxmlformats-officedocument.wordprocessingml.document', 'docx'],
  ['application/vnd.openxmlformats-officedocument.presentationml.presentation', 'pptx'],
  ['application/vnd.openxmlformats-officedocument.spreadsheetml.sheet', 'xlsx'],
];

/** Files are named by position and type (SPEC 2.7), and sent as messenger media by type (SPEC 4.4 rule 5). */
describe('file names and types', function () {
  let red: NodeRed;
  let fake: FakeTwilioMessagingApi;
  const token = 'tok-types-' + uid();
  const outToken = 'tok-types-out-' + uid();
  const outgoing = [...SPEC_TYPES.map(([, ext], i) => `spec${i}.${ext}`), 'notes.xyz', 'page.html'];

  before(async function () {
    fake = await FakeTwilioMessagingApi.start(ACCOUNT_SID, AUTH_TOKEN);
    red = await NodeRed.start();
    const storage = join(red.userDir, 'channel-sessions', 'storage');
    mkdirSync(storage, { recursive: true });
    for (const name of outgoing) writeFileSync(join(storage, name), `bytes of ${name}`);
    await red.deploy([
      messagingEnvironment('envTypes', token, fake, red),
      messagingEnvironment('envTypesOut', outToken, fake, red),
      tab('pTypes', 'Types'),
      ...chain('pTypes', [
        ['telco-messenger-start', 'tStart', { environment: 'envTypes' }],
        ['input-task', 'tIn', { prompt: '', resultVariable: 'r' }],
        ['end-task', 'tEnd'],
      ]),
      tab('pTypesOut', 'Types out'),
      ...chain('pTypesOut', [
        ['telco-messenger-start', 'oStart', { environment: 'envTypesOut' }],
        [
          'output-task',
          'oFirst',
          {
            text: 'first ten',
            attachments: outgoing
              .slice(0, 10)
              .map((n) => `ref-storage:${n}`)
              .join(', '),
          },
        ],
        [
          'output-task',
          'oRest',
          {
            text: 'the rest',
            attachments: outgoing
              .slice(10)
              .map((n) => `ref-storage:${n}`)
              .join(', '),
          },
        ],
        ['end-task', 'oEnd'],
      ]),
    ]);
  });
  after(async function () {
    await red?.close();
    await fake?.close();
  });

  function withMedia(from: string, body: string, types: string[]): Record<string, string> {
    const sid = messageSid('MM');
    const extra: Record<string, string> = { MessageSid: sid, NumMedia: String(types.length) };
    types.forEach((type, i) => {
      extra[`MediaUrl${i}`] = fake.addMedia(sid, `ME${uid()}${i}`.padEnd(34, '0'), { data: Buffer.from(`media ${i}`), type: type.split(';')[0] });
      extra[`MediaContentType${i}`] = type;
    });
    return inboundForm(from, WA_OURS, body, extra);
  }

  it('names received files by position and type for every type SPEC 4.4 lists', async function () {
    const user = 'whatsapp:+447700900301';
    const first = SPEC_TYPES.slice(0, 5);
    const rest = SPEC_TYPES.slice(5);
    (
      await postInbound(
        red,
        token,
        withMedia(
          user,
          'opening',
          first.map(([t]) => t),
        ),
      )
    ).status.should.equal(200);
    const waiting = await sessionWhen(red, 'envTypes', user, WA_OURS, (s) => s.waitingAt?.nodeId === 'tIn', 'the Session');
    waiting.vars.message.files.names.should.equal(first.map(([, ext], i) => `file-${i + 1}.${ext}`).join(', '));
    waiting.vars.message.files['2'].type.should.equal('audio/ogg', 'the codecs parameter is not part of the type');
    (
      await postInbound(
        red,
        token,
        withMedia(
          user,
          'reply',
          rest.map(([t]) => t),
        ),
      )
    ).status.should.equal(200);
    const done = await sessionWhen(red, 'envTypes', user, WA_OURS, (s) => s.state === 'completed', 'the reply');
    done.vars.r_files.map((f: any) => f.name).should.eql(rest.map(([, ext], i) => `file-${i + 1}.${ext}`));
  });

  it('names a type the database does not know .bin', async function () {
    const user = 'whatsapp:+447700900302';
    await postInbound(red, token, withMedia(user, 'odd', ['application/x-made-up-type']));
    const waiting = await sessionWhen(red, 'envTypes', user, WA_OURS, (s) => s.waitingAt?.nodeId === 'tIn', 'the Session');
    waiting.vars.message.files.names.should.equal('file-1.bin');
  });

  it('sends every SPEC type as messenger media, served with its type; other types go as a link', async function () {
    const user = 'whatsapp:+447700900303';
    await postInbound(red, outToken, inboundForm(user, WA_OURS, 'send'));
    // ten files with the text as the first image's caption; then the text alone and five files
    const sent = await eventually(() => fake.messagesTo(user).length === 16 && fake.messagesTo(user), 8000, 'all 16 messages');
    sent[0].Body.should.equal('first ten');
    const media = sent.filter((m) => m.MediaUrl);
    media.should.have.length(SPEC_TYPES.length);
    for (const [i, [type]] of SPEC_TYPES.entries()) {
      const res = await fetch(String(media[i].MediaUrl));
      res.status.should.equal(200);
      res.headers.get('content-type')!.should.equal(type.split(';')[0], outgoing[i]);
    }
    const plain = sent.filter((m) => !m.MediaUrl).map((m) => String(m.Body));
    plain.should.have.length(3);
    plain[0].should.equal('the rest');
    plain[1].should.match(/^notes\.xyz: http:\/\/127\.0\.0\.1:\d+\/api\/TelcoModule\/Messaging\/media\//);
    plain[2].should.match(/^page\.html: http:\/\/127\.0\.0\.1:\d+\/api\/TelcoModule\/Messaging\/media\//);
  });
});
