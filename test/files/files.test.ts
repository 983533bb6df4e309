import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import should from 'should';
import { NodeRed, eventually } from '../harness/node-red';
import { chain, node, tab, uid } from '../harness/flows';

const b64 = (text: string) => Buffer.from(text).toString('base64');

async function startTest(red: NodeRed, start: string) {
  const res = await red.admin('POST', '/channel-sessions/test-sessions', { start });
  should(res.status).equal(201, res.text);
  return res.body;
}

async function say(red: NodeRed, id: string, text: string, files?: unknown[]) {
  const res = await red.admin('POST', `/channel-sessions/test-sessions/${id}/messages`, { text, files });
  should(res.status).equal(200, res.text);
  return res.body;
}

function filesProcess(z: string, attachments = 'ref-session:docs') {
  return [
    tab(z, z),
    ...chain(z, [
      ['session-start', `${z}s`, {}],
      ['input-task', `${z}i`, { prompt: 'files?', resultVariable: 'note', filesVariable: 'docs' }],
      ['output-task', `${z}o`, { text: '{docs.count} kept', attachments }],
      ['end-task', `${z}e`],
    ]),
  ];
}

describe('files in Workspace storage', function () {
  this.timeout(60000);
  let red: NodeRed;
  before(async function () {
    red = await NodeRed.start({ settings: { channelSessions: { workspaceQuota: 64 } } });
    mkdirSync(join(red.userDir, 'channel-sessions', 'workspace'), { recursive: true });
    mkdirSync(join(red.userDir, 'channel-sessions', 'storage'), { recursive: true });
    writeFileSync(join(red.userDir, 'channel-sessions', 'workspace', 'menu.pdf'), 'pdf bytes');
    writeFileSync(join(red.userDir, 'channel-sessions', 'storage', 'terms.txt'), 'terms');
  });
  after(async () => red?.close());

  it('keeps received files under the user dir and frees them when the Session ends', async function () {
    const z = uid('f');
    await red.deploy(filesProcess(z, ''));
    const s = await startTest(red, `${z}s`);
    const done = await say(red, s.id, 'one', [{ name: 'a.txt', data: b64('0123456789') }]);
    should(done.state).equal('completed', `${done.endReason} ${JSON.stringify(done.log)}`);
    const file = done.vars.docs['0'];
    should({ name: file.name, type: file.type, size: file.size }).eql({ name: 'a.txt', type: 'text/plain', size: 10 });
    should(file.path).match(new RegExp(`^sessions/${s.id}/`));
    should(done.state).equal('completed');
    await eventually(() => !existsSync(join(red.userDir, 'channel-sessions', 'workspace', file.path)), 3000, 'the file to be freed');
  });

  it('keeps at most 5 files per message; the rest are noted as 4022 and the text still arrives', async function () {
    const z = uid('f');
    await red.deploy(filesProcess(z, ''));
    const s = await startTest(red, `${z}s`);
    const six = Array.from({ length: 6 }, (_, i) => ({ name: `f${i}.txt`, data: b64('x') }));
    const done = await say(red, s.id, 'six files', six);
    should(done.vars.note).equal('six files');
    should(done.vars.docs.count).equal(5);
    const warning = done.log.find((e: any) => e.code === 4022);
    should(warning.message).match(/f5\.txt skipped: at most 5 files/);
  });

  it('full Workspace storage: 9007 in the Session log, the Session goes on without the file', async function () {
    const z = uid('f');
    await red.deploy(filesProcess(z, ''));
    const s = await startTest(red, `${z}s`);
    const big = Buffer.alloc(100, 1).toString('base64');
    const done = await say(red, s.id, 'big', [{ name: 'big.bin', data: big }]);
    should(done.state).equal('completed');
    should(done.vars.docs.count).equal(0);
    should(done.log.find((e: any) => e.code === 9007)?.level).equal('warn');
  });

  it('resolves ref-workspace: and ref-storage: Attachments', async function () {
    const z = uid('f');
    await red.deploy(filesProcess(z, 'ref-workspace:menu.pdf, ref-storage:terms.txt'));
    const s = await startTest(red, `${z}s`);
    const done = await say(red, s.id, 'none');
    const out = done.transcript.find((l: any) => l.text === '0 kept');
    should(out.files).eql(['menu.pdf', 'terms.txt']);
  });

  for (const [attachments, reason] of [
    ['ref-workspace:../settings.js', /outside the storage folder|missing or not a file/],
    ['ref-storage:nope.txt', /missing or not a file/],
    ['ref-session:note', /not a file or file list/],
    ['http://example.com/x.pdf', /is not ref-session:, ref-storage: or ref-workspace:/],
  ] as const) {
    it(`an unusable Attachments entry (${attachments}) stops the Task with 3005 before anything is said`, async function () {
      const z = uid('f');
      await red.deploy(filesProcess(z, attachments));
      const s = await startTest(red, `${z}s`);
      const done = await say(red, s.id, 'x');
      should(done.error.code).equal(3005);
      should(done.error.message).match(reason);
      should(done.transcript.some((l: any) => l.text === '0 kept')).be.false('nothing was said');
    });
  }

  it('more than 10 Attachments stop the Task with 3005', async function () {
    const z = uid('f');
    const eleven = Array.from({ length: 11 }, () => 'ref-workspace:menu.pdf').join(',');
    await red.deploy(filesProcess(z, eleven));
    const s = await startTest(red, `${z}s`);
    const done = await say(red, s.id, 'x');
    should(done.error.code).equal(3005);
    should(done.error.message).match(/11 files, at most 10/);
  });
});

describe('inline file storage', function () {
  this.timeout(60000);
  let red: NodeRed;
  before(async function () {
    red = await NodeRed.start({ settings: { channelSessions: { fileStorage: 'inline' } } });
  });
  after(async () => red?.close());

  it('keeps received files base64 in the Session', async function () {
    const z = uid('f');
    await red.deploy(filesProcess(z));
    const s = await startTest(red, `${z}s`);
    const done = await say(red, s.id, 'inline', [{ name: 'a.txt', data: b64('inline bytes') }]);
    should(Buffer.from(done.vars.docs['0'].data, 'base64').toString()).equal('inline bytes');
    should(done.vars.docs['0'].path).equal(undefined);
    should(done.transcript.find((l: any) => l.text === '1 kept').files).eql(['a.txt']);
  });

  it('gives the token its documented shape: msg.session, msg.payload and vars.execution', async function () {
    const z = uid('t');
    await red.deploy([
      tab(z, 'Shape'),
      node('session-start', `${z}s`, z, {}, [[`${z}f`]]),
      node(
        'function',
        `${z}f`,
        z,
        {
          func: 'msg.vars.shape = { session: Object.keys(msg.session).sort(), payload: msg.payload, execution: Object.keys(msg.vars.execution).sort() }; return msg;',
          outputs: 1,
        },
        [[`${z}i`]],
      ),
      node('input-task', `${z}i`, z, { prompt: '', resultVariable: 'a' }, [[]]),
    ]);
    const s = (await red.admin('POST', '/channel-sessions/test-sessions', { start: `${z}s`, testData: { text: 'opening words' } })).body;
    should(s.vars.shape).eql({
      session: ['channel', 'environment', 'id', 'isTest', 'process'],
      payload: 'opening words',
      execution: ['channel', 'channelName', 'channelRecipient', 'channelSender', 'sessionId'],
    });
    should(s.process).equal(z);
  });
});
