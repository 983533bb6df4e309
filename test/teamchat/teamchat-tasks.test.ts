import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import should from 'should';
import { node, tab, uid, type FlowNode } from '../harness/flows';
import { NodeRed, eventually } from '../harness/node-red';
import { FakeSlack } from '../fakes/slack-api';
import { SlackEvents } from '../fakes/slack-events';
import { SIGNING_SECRET, helpDesk, teamchatEnvironment } from '../fakes/slack-flows';

const MB = 1024 * 1024;

/** OutputTask, InputTask and EndTask on TeamChatChannel: escaping, threads, files both ways, scopes. */
describe('team chat: standard Tasks on TeamChatChannel', function () {
  let red: NodeRed;
  let fake: FakeSlack;
  /** Slack's file host, a host of its own: the upload URLs of one test point at it. */
  let filesHost: FakeSlack;
  let foreign: Server;
  let foreignHits: Array<{ url: string; auth: string }>;
  let slack: SlackEvents;
  let envId: string;

  before(async function () {
    fake = await FakeSlack.start();
    filesHost = await FakeSlack.start();
    foreignHits = [];
    foreign = createServer((req, res) => {
      foreignHits.push({ url: req.url ?? '', auth: req.headers.authorization ?? '' });
      res.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.from('not for the token'));
    });
    await new Promise<void>((r) => foreign.listen(0, '127.0.0.1', () => r()));
    red = await NodeRed.start({ settings: { channelSessions: { fileStorage: 'inline' } } });
  });
  after(async function () {
    await red?.close();
    await fake?.close();
    await filesHost?.close();
    await new Promise((r) => foreign?.close(r));
  });

  async function deploy(flow: (z: string, envId: string) => FlowNode[], props: Record<string, unknown> = {}, credentials: Record<string, string> = {}) {
    fake.reset();
    foreignHits.length = 0;
    const z = uid('tab');
    envId = uid('env');
    const token = `tok${uid('t')}BBBBBBBBBBBBBBBBBBBB`;
    await red.deploy([tab(z, 'Tasks'), teamchatEnvironment(envId, token, fake, props, credentials), ...flow(z, envId)]);
    slack = new SlackEvents(red, token, SIGNING_SECRET, fake.team);
  }

  function ids() {
    return { start: uid('s'), hello: uid('h'), ask: uid('a'), reply: uid('r'), end: uid('e') };
  }

  /** Sends a direct message and returns the Session it started or continued once it waits or ends. */
  async function say(event: Record<string, unknown>, state: 'waiting' | 'completed' | 'ended', sessionId?: string): Promise<any> {
    const res = await slack.post(slack.envelope(event));
    should(res.status).equal(200, res.text);
    return eventually(
      async () => {
        const list = (await red.admin('GET', `/channel-sessions/sessions?environment=${envId}&ended=true`)).body as any[];
        const s = sessionId ? list.find((x) => x.id === sessionId) : list[0];
        if (!s || s.state !== state) return undefined;
        if (sessionId && state === 'waiting' && s.lastActivity < Date.now() - 60000) return undefined;
        return (await red.admin('GET', `/channel-sessions/sessions/${s.id}`)).body;
      },
      8000,
      `the Session to be ${state}`,
    );
  }

  function slackFile(name: string, data: Buffer, type: string, extra: Record<string, unknown> = {}) {
    const url = fake.addFile(name, data, type);
    return { id: `F${name}`, name, title: name, mimetype: type, size: data.length, mode: 'hosted', url_private: url, url_private_download: url, ...extra };
  }

  it('posts placeholder values as literal text: pings, mentions and disguised links are escaped', async function () {
    await deploy((z, env) =>
      helpDesk(z, env, ids(), {
        hello: '<!here> {teamchat.profileName} wrote: {teamchat.text}',
      }),
    );
    fake.users.U1 = { name: 'mal', real_name: 'Mal', display_name: '<!channel> Mal' };
    const s = await say(slack.direct('U1', '<!channel> <!here> <@U0BOSS> see <https://evil.example|bank.com> &amp; more'), 'waiting');
    should(s.vars.teamchat.text).equal('<!channel> <!here> <@U0BOSS> see <https://evil.example|bank.com> & more');
    const hello = fake.callsOf('chat.postMessage')[0].body;
    should(hello.text).equal(
      '<!here> &lt;!channel&gt; Mal wrote: &lt;!channel&gt; &lt;!here&gt; &lt;@U0BOSS&gt; see &lt;https://evil.example|bank.com&gt; &amp; more',
    );
    should(hello.link_names).equal(undefined);
    should(hello.parse).equal(undefined);
    should(s.history[1].text).equal(
      '<!here> <!channel> Mal wrote: <!channel> <!here> <@U0BOSS> see <https://evil.example|bank.com> & more',
      'the history keeps the text as said, unescaped',
    );
  });

  it('EndTask posts nothing and completes the Session', async function () {
    await deploy((z, env) => helpDesk(z, env, ids()));
    const first = slack.direct('U1', 'hi');
    const s = await say(first, 'waiting');
    const done = await say(slack.direct('U1', 'bye', { thread_ts: first.ts }), 'completed', s.id);
    should(done.endReason).equal('EndTask reached');
    should(fake.callsOf('chat.postMessage').map((c) => c.body.text)).eql(['Hello : hi', 'What else?', 'Got bye']);
  });

  it('keeps the files of a reply (Store files in), downloaded with the bot token', async function () {
    await deploy((z, env) => helpDesk(z, env, ids(), { filesVariable: 'docs', reply: 'Got {docs.count}: {docs.names}' }));
    const first = slack.direct('U1', 'hi');
    const s = await say(first, 'waiting');
    const png = Buffer.from('\x89PNG fake image bytes');
    const pdf = Buffer.from('%PDF-1.4 fake');
    const reply = slack.direct('U1', 'here they are', {
      subtype: 'file_share',
      thread_ts: first.ts,
      files: [slackFile('shot.png', png, 'image/png'), slackFile('report.pdf', pdf, 'application/pdf')],
    });
    const done = await say(reply, 'completed', s.id);
    should(done.vars.docs.count).equal(2);
    should(done.vars.docs.names).equal('shot.png, report.pdf');
    should(Buffer.from(done.vars.docs['0'].data, 'base64').toString()).equal(png.toString());
    should(fake.fileRequests.length).equal(2);
    should(fake.fileRequests.every((r) => r.token === fake.botToken)).be.true('downloaded with the bot token');
    should(done.history.find((h: any) => h.text === 'here they are').files).eql(['shot.png', 'report.pdf']);
  });

  it('uploads Attachments with filesUploadV2 right below the message, in the thread', async function () {
    await deploy((z, env) => [
      node('teamchat-start', 'fs1' + z, z, { environment: env }, [['fin' + z]]),
      node('input-task', 'fin' + z, z, { prompt: 'Send files', resultVariable: 'answer', filesVariable: 'docs' }, [['fout' + z], []]),
      node('output-task', 'fout' + z, z, { text: 'Your {docs.count} files', attachments: 'ref-session:docs' }, [['fempty' + z], []]),
      node('output-task', 'fempty' + z, z, { text: '{nothing}', attachments: 'ref-session:docs.0' }, [['fend' + z], []]),
      node('end-task', 'fend' + z, z, {}),
    ]);
    const first = slack.direct('U1', 'start');
    const s = await say(first, 'waiting');
    const a = Buffer.from('alpha file');
    const b = Buffer.from('beta file!!');
    const done = await say(
      slack.direct('U1', 'take these', {
        subtype: 'file_share',
        thread_ts: first.ts,
        files: [slackFile('a.txt', a, 'text/plain'), slackFile('b.csv', b, 'text/csv')],
      }),
      'completed',
      s.id,
    );
    should(done.state).equal('completed', JSON.stringify(done.log));
    const sequence = fake.calls.filter((c) => c.method !== 'auth.test' && c.method !== 'users.info').map((c) => c.method);
    should(sequence).eql([
      'chat.postMessage', // prompt
      'chat.postMessage', // "Your 2 files"
      'files.getUploadURLExternal',
      'files.getUploadURLExternal',
      'files.completeUploadExternal',
      'files.getUploadURLExternal',
      'files.completeUploadExternal', // the Output with empty text: only the file
    ]);
    const completes = fake.callsOf('files.completeUploadExternal');
    should(completes.map((c) => [c.body.channel_id, c.body.thread_ts])).eql([
      ['D0DIRECT1', first.ts],
      ['D0DIRECT1', first.ts],
    ]);
    should(completes[0].body.files.map((f: any) => f.title)).eql(['a.txt', 'b.csv']);
    const uploaded = [...fake.uploads.values()];
    should(uploaded.map((u) => [u.filename, u.data.toString(), u.token])).eql([
      ['a.txt', 'alpha file', fake.botToken],
      ['b.csv', 'beta file!!', fake.botToken],
      ['a.txt', 'alpha file', fake.botToken],
    ]);
    const out = done.history.find((h: any) => h.text === 'Your 2 files');
    should(out.files).eql(['a.txt', 'b.csv']);
  });

  it('uploads to an upload URL on another host without the bot token; the file is still posted', async function () {
    await deploy((z, env) => [
      node('teamchat-start', 'hs1' + z, z, { environment: env }, [['hin' + z]]),
      node('input-task', 'hin' + z, z, { prompt: 'Send a file', resultVariable: 'answer', filesVariable: 'docs' }, [['hout' + z], []]),
      node('output-task', 'hout' + z, z, { text: 'Your file', attachments: 'ref-session:docs' }, [['hend' + z], []]),
      node('end-task', 'hend' + z, z, {}),
    ]);
    fake.uploadHost = filesHost;
    filesHost.reset();
    const first = slack.direct('U1', 'start');
    const s = await say(first, 'waiting');
    const file = slackFile('a.txt', Buffer.from('alpha file'), 'text/plain');
    const done = await say(slack.direct('U1', 'take it', { subtype: 'file_share', thread_ts: first.ts, files: [file] }), 'completed', s.id);
    should(done.log.filter((l: any) => l.level !== 'info')).eql([], 'nothing went wrong');
    should([...filesHost.uploads.values()].map((u) => [u.filename, u.data.toString(), u.token])).eql([['a.txt', 'alpha file', '']]);
    should(fake.callsOf('files.completeUploadExternal')).have.length(1);
  });

  it('keeps at most 5 files and 10 MB per reply; skipped files go to the Session log as 4022', async function () {
    await deploy((z, env) => helpDesk(z, env, ids(), { filesVariable: 'docs' }));
    const first = slack.direct('U1', 'hi');
    const s = await say(first, 'waiting');
    const big = { ...slackFile('huge.zip', Buffer.from('small stand-in'), 'application/zip'), size: 11 * MB };
    const files = [big, ...[1, 2, 3, 4, 5, 6].map((i) => slackFile(`f${i}.txt`, Buffer.from(`file ${i}`), 'text/plain'))];
    const done = await say(slack.direct('U1', 'many', { subtype: 'file_share', thread_ts: first.ts, files }), 'completed', s.id);
    should(done.vars.docs.count).equal(4, done.vars.docs.names);
    should(done.vars.docs.names).equal('f1.txt, f2.txt, f3.txt, f4.txt');
    const warnings = done.log.filter((l: any) => l.code === 4022).map((l: any) => l.message);
    should(warnings.length).equal(3, warnings.join(' | '));
    should(warnings.join(' | ')).match(/huge\.zip skipped: over the 10 MB/);
    should(warnings.join(' | ')).match(/f5\.txt skipped: at most 5 files/);
    should(fake.fileRequests.some((r) => r.path.includes('huge.zip'))).be.false('the oversized file was not downloaded');
    should(done.vars.answer).equal('many', 'the text still arrives');
  });

  it("never sends the bot token to a host that is not Slack's; deleted and external files are skipped", async function () {
    await deploy((z, env) => helpDesk(z, env, ids(), { filesVariable: 'docs' }));
    const first = slack.direct('U1', 'hi');
    const s = await say(first, 'waiting');
    const foreignUrl = `http://127.0.0.1:${(foreign.address() as AddressInfo).port}/evil.png`;
    const done = await say(
      slack.direct('U1', 'look', {
        subtype: 'file_share',
        thread_ts: first.ts,
        files: [
          { id: 'F1', name: 'evil.png', mimetype: 'image/png', size: 10, url_private: foreignUrl, url_private_download: foreignUrl },
          { id: 'F2', name: 'gone.txt', mode: 'tombstone' },
          { id: 'F3', name: 'ext.doc', mode: 'external', is_external: true, url_private: foreignUrl },
          { id: 'F4', file_access: 'check_file_info' },
          slackFile('ok.txt', Buffer.from('fine'), 'text/plain'),
        ],
      }),
      'completed',
      s.id,
    );
    should(foreignHits.length).equal(0, 'the foreign host was never contacted');
    should(done.vars.docs.names).equal('ok.txt');
    const warnings = done.log
      .filter((l: any) => l.code === 4022)
      .map((l: any) => l.message)
      .join(' | ');
    should(warnings).match(/evil\.png skipped: not on a Slack file host/);
    should(warnings).match(/gone\.txt skipped: the file was deleted/);
    should(warnings).match(/ext\.doc skipped: stored outside Slack/);
    should(warnings).match(/file-4 skipped: shared from another organization/);
  });

  it("follows a download redirect only within Slack's file host; the token never follows it elsewhere", async function () {
    await deploy((z, env) => helpDesk(z, env, ids(), { filesVariable: 'docs' }));
    const first = slack.direct('U1', 'hi');
    const s = await say(first, 'waiting');
    const foreignUrl = `http://127.0.0.1:${(foreign.address() as AddressInfo).port}/moved.png`;
    const real = new URL(fake.addFile('real.txt', Buffer.from('real'), 'text/plain')).pathname;
    const done = await say(
      slack.direct('U1', 'look', {
        subtype: 'file_share',
        thread_ts: first.ts,
        files: [
          { id: 'F5', name: 'moved.png', mimetype: 'image/png', size: 10, url_private_download: fake.addRedirect('moved.png', foreignUrl) },
          { id: 'F6', name: 'same-host.txt', mimetype: 'text/plain', size: 4, url_private_download: fake.addRedirect('same-host.txt', real) },
        ],
      }),
      'completed',
      s.id,
    );
    should(foreignHits.length).equal(0, 'the foreign host was never contacted');
    should(done.vars.docs.names).equal('same-host.txt');
    should(Buffer.from(done.vars.docs['0'].data, 'base64').toString()).equal('real');
    should(done.log.find((l: any) => l.code === 4022).message).match(
      /moved\.png skipped: could not be downloaded: refused to send the bot token to http:\/\/127\.0\.0\.1:\d+$/,
    );
  });

  it('without Store files in, nothing is downloaded and {<variable>_files} lists name, type and size', async function () {
    await deploy((z, env) => helpDesk(z, env, ids()));
    const first = slack.direct('U1', 'hi');
    const s = await say(first, 'waiting');
    const done = await say(
      slack.direct('U1', 'fyi', {
        subtype: 'file_share',
        thread_ts: first.ts,
        files: [slackFile('notes.txt', Buffer.from('12345'), 'text/plain')],
      }),
      'completed',
      s.id,
    );
    should(done.vars.answer_files).eql([{ name: 'notes.txt', type: 'text/plain', size: 5 }]);
    should(fake.fileRequests.length).equal(0);
    should(done.history.find((h: any) => h.text === 'fyi').files).eql(['notes.txt']);
  });

  it("keeps the opening message's files in {teamchat.files} with files:read", async function () {
    await deploy((z, env) => helpDesk(z, env, ids()));
    const s = await say(
      slack.direct('U1', 'opening with a file', {
        subtype: 'file_share',
        files: [slackFile('first.txt', Buffer.from('opening'), 'text/plain')],
      }),
      'waiting',
    );
    should(s.vars.teamchat.files.count).equal(1);
    should(s.vars.teamchat.files['0'].name).equal('first.txt');
    should(Buffer.from(s.vars.teamchat.files['0'].data, 'base64').toString()).equal('opening');
  });

  it('without files:read the opening files are not downloaded and the log says why', async function () {
    fake.scopes = 'chat:write,im:history';
    await deploy((z, env) => helpDesk(z, env, ids()));
    fake.scopes = 'chat:write,im:history';
    const s = await say(
      slack.direct('U1', 'file but no scope', {
        subtype: 'file_share',
        files: [slackFile('first.txt', Buffer.from('opening'), 'text/plain')],
      }),
      'waiting',
    );
    should(s.vars.teamchat.files.count).equal(0);
    should(fake.fileRequests.length).equal(0);
    should(s.log.find((l: any) => l.code === 4022).message).match(/files:read/);
  });

  it('an InputTask with Store files in stops with 4008 naming files:read before posting its prompt', async function () {
    fake.scopes = 'chat:write,im:history';
    await deploy((z, env) => helpDesk(z, env, ids(), { filesVariable: 'docs' }));
    fake.scopes = 'chat:write,im:history';
    const s = await say(slack.direct('U1', 'hi'), 'ended');
    const error = s.log.find((l: any) => l.code === 4008);
    should(error.message).match(/files:read/);
    should(fake.callsOf('chat.postMessage').map((c) => c.body.text)).eql(['Hello : hi'], 'the prompt was not posted');
  });

  it('an OutputTask with Attachments stops with 4008 naming files:write before anything is posted', async function () {
    fake.scopes = 'chat:write,im:history,files:read';
    await deploy((z, env) =>
      helpDesk(z, env, ids(), { filesVariable: 'docs', reply: 'Here: {docs.names}' }).map((n) =>
        n.type === 'output-task' && (n.text as string).startsWith('Here') ? { ...n, attachments: 'ref-session:docs' } : n,
      ),
    );
    fake.scopes = 'chat:write,im:history,files:read';
    const first = slack.direct('U1', 'hi');
    const s = await say(first, 'waiting');
    const done = await say(
      slack.direct('U1', 'file', {
        subtype: 'file_share',
        thread_ts: first.ts,
        files: [slackFile('x.txt', Buffer.from('x'), 'text/plain')],
      }),
      'ended',
      s.id,
    );
    should(done.log.find((l: any) => l.code === 4008).message).match(/files:write/);
    should(fake.callsOf('chat.postMessage').some((c) => c.body.text.startsWith('Here'))).be.false('nothing posted');
    should(fake.callsOf('files.getUploadURLExternal').length).equal(0);
  });

  it('an unusable Attachments entry stops the OutputTask with 3005 and nothing is posted', async function () {
    await deploy((z, env) => helpDesk(z, env, ids(), { attachments: 'ref-session:nothing' }));
    const s = await say(slack.direct('U1', 'hi'), 'ended');
    should(s.log.find((l: any) => l.level === 'error').code).equal(3005);
    should(fake.callsOf('chat.postMessage').length).equal(0);
  });

  it('Attachments over 10 files or 15 MB stop the OutputTask with 3005 before anything is posted', async function () {
    const dir = join(red.userDir, 'channel-sessions', 'workspace');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'small.txt'), 'small');
    writeFileSync(join(dir, 'big.bin'), Buffer.alloc(16 * MB));
    const eleven = Array.from({ length: 11 }, () => 'ref-workspace:small.txt').join(', ');
    const ten = Array.from({ length: 10 }, () => 'ref-workspace:small.txt').join(', ');
    for (const [attachments, expected] of [
      [eleven, /11 files, at most 10/],
      ['ref-workspace:big.bin', /at most 15 MB/],
    ] as const) {
      await deploy((z, env) => helpDesk(z, env, ids(), { attachments }));
      const s = await say(slack.direct('U1', 'hi'), 'ended');
      const error = s.log.find((l: any) => l.level === 'error');
      should(error.code).equal(3005);
      should(error.message).match(expected);
      should(fake.callsOf('chat.postMessage').length + fake.callsOf('files.getUploadURLExternal').length).equal(0);
    }
    await deploy((z, env) => helpDesk(z, env, ids(), { attachments: ten }));
    await say(slack.direct('U1', 'ten is fine'), 'waiting');
    should(fake.callsOf('files.getUploadURLExternal').length).equal(10);
    should(fake.callsOf('files.completeUploadExternal')[0].body.files.length).equal(10);
  });

  it('a missing Bot Token stops the Task with 4008 and the runtime carries on', async function () {
    await deploy((z, env) => helpDesk(z, env, ids()), {}, { botToken: '' });
    await red.waitForLog(/Tasks that post to Slack need the Bot Token \(without it they stop with 4008\); the Test chat plays it without them/);
    const s = await say(slack.direct('U1', 'hi'), 'ended');
    should(s.log.find((l: any) => l.code === 4008).message).match(/no Bot Token/);
    should(fake.calls.length).equal(0);
    const again = await slack.post(slack.envelope(slack.direct('U1', 'still alive')));
    should(again.status).equal(200);
  });

  it('Slack refusing the message takes the error branch with 4001 and the reason', async function () {
    await deploy((z, env) => [
      node('teamchat-start', 'rs' + z, z, { environment: env }, [['rout' + z]]),
      node('output-task', 'rout' + z, z, { text: 'hello' }, [[], ['rerr' + z]]),
      node('function', 'rerr' + z, z, { func: 'node.warn("branch " + msg.error.code + " " + msg.error.message); return null;', outputs: 1 }, [[]]),
    ]);
    fake.failures.set('chat.postMessage', 'not_in_channel');
    await slack.post(slack.envelope(slack.direct('U1', 'hi')));
    await red.waitForLog(/branch 4001 chat\.postMessage: Slack answered not_in_channel/);
  });

  it('a Web API answer that redirects is not followed: the token never leaves the API URL and the Task takes 4001', async function () {
    await deploy((z, env) => [
      node('teamchat-start', 'ds' + z, z, { environment: env }, [['dout' + z]]),
      node('output-task', 'dout' + z, z, { text: 'hello' }, [[], ['derr' + z]]),
      node('function', 'derr' + z, z, { func: 'node.warn("branch " + msg.error.code + " " + msg.error.message); return null;', outputs: 1 }, [[]]),
    ]);
    const hitsBefore = foreignHits.length;
    fake.redirects.set('chat.postMessage', `http://127.0.0.1:${(foreign.address() as AddressInfo).port}/api/chat.postMessage`);
    await slack.post(slack.envelope(slack.direct('U1', 'hi')));
    await red.waitForLog(/branch 4001 chat\.postMessage: Slack answered HTTP 307/);
    should(foreignHits.length).equal(hitsBefore, 'the redirect target was never contacted');
  });
});
