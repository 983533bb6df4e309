import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { NodeRed, eventually } from './harness/node-red';
import { chain, node, tab, uid } from './harness/flows';

/** The foundation through the test chat admin routes: a Process talks on the Chat Channel. */
describe('test chat: Start -> Output -> Input -> Output -> End', () => {
  let red: NodeRed;
  before(async () => {
    red = await NodeRed.start({ settings: { channelSessions: { fileStorage: 'workspace' } } });
  });
  after(async () => red?.close());

  async function startTest(startId: string, testData?: Record<string, unknown>) {
    const res = await red.admin('POST', '/channel-sessions/test-sessions', { start: startId, testData });
    assert.equal(res.status, 201, res.text);
    return res.body;
  }

  async function say(sessionId: string, text: string, files?: unknown[]) {
    const res = await red.admin('POST', `/channel-sessions/test-sessions/${sessionId}/messages`, { text, files });
    assert.equal(res.status, 200, res.text);
    return res.body;
  }

  it('runs a conversation with variables and placeholders, then completes', async () => {
    const z = uid('tab');
    await red.deploy([
      tab(z, 'Greeter'),
      ...chain(z, [
        ['session-start', 'start1', { testData: { text: 'hello there' } }],
        ['output-task', 'out1', { text: 'You said "{execution.channel}" {missing.path}first: {payload}' }],
        ['input-task', 'in1', { prompt: 'What is your name?', resultVariable: 'name' }],
        ['output-task', 'out2', { text: 'Nice to meet you, {name}.' }],
        ['end-task', 'end1'],
      ]),
    ]);
    const started = await startTest('start1');
    assert.equal(started.state, 'waiting');
    assert.equal(started.channel, 'Chat');
    assert.equal(started.isTest, true);
    assert.equal(started.waitingAt.nodeId, 'in1');
    assert.deepEqual(started.transcript.map((l: any) => [l.from, l.kind, l.text]), [
      ['user', 'message', 'hello there'],
      ['bot', 'message', 'You said "Chat" first: '],
      ['bot', 'prompt', 'What is your name?'],
    ]);
    const finished = await say(started.id, 'Ada');
    assert.equal(finished.state, 'completed');
    assert.equal(finished.vars.name, 'Ada');
    assert.deepEqual(finished.vars.name_files, []);
    assert.equal(finished.vars.execution.sessionId, started.id);
    const lines = finished.transcript.map((l: any) => [l.from, l.text]);
    assert.deepEqual(lines.slice(3), [['user', 'Ada'], ['bot', 'Nice to meet you, Ada.'], ['system', 'EndTask reached']]);
    const live = await red.admin('GET', '/channel-sessions/sessions');
    assert.equal(live.body.filter((s: any) => s.id === started.id).length, 0, 'a completed Session is no longer live');
  });

  it('keeps files sent in the chat as a file list and resolves ref-session: Attachments', async () => {
    const z = uid('tab');
    await red.deploy([
      tab(z, 'Files'),
      ...chain(z, [
        ['session-start', 'fstart', {}],
        ['input-task', 'fin', { prompt: 'Send files', resultVariable: 'note', filesVariable: 'docs' }],
        ['output-task', 'fout', { text: 'Got {docs.count}: {docs.names}; first is {docs.0.name}', attachments: 'ref-session:docs' }],
        ['end-task', 'fend'],
      ]),
    ]);
    const started = await startTest('fstart');
    const data = Buffer.from('hello file').toString('base64');
    const done = await say(started.id, 'here', [{ name: 'a.txt', type: 'text/plain', data }, { name: 'b.pdf', data }]);
    assert.equal(done.state, 'completed', JSON.stringify(done.transcript));
    assert.equal(done.vars.docs.count, 2);
    assert.equal(done.vars.docs.names, 'a.txt, b.pdf');
    assert.equal(done.vars.docs['0'].size, 10);
    assert.equal(done.vars.docs['1'].type, 'application/pdf');
    const out = done.transcript.find((l: any) => l.text.startsWith('Got'));
    assert.equal(out.text, 'Got 2: a.txt, b.pdf; first is a.txt');
    assert.deepEqual(out.files, ['a.txt', 'b.pdf']);
  });

  it('routes an error to a wired error branch with msg.error and the Session goes on', async () => {
    const z = uid('tab');
    await red.deploy([
      tab(z, 'Errors wired'),
      node('session-start', 'es', z, {}, [['eout']]),
      node('output-task', 'eout', z, { text: 'x', attachments: 'ref-workspace:nope.pdf' }, [[], ['eerr']]),
      node('output-task', 'eerr', z, { text: 'Error {error.code}' }, [['ein']]),
      node('input-task', 'ein', z, { prompt: 'still here', resultVariable: 'a' }, [[]]),
    ]);
    const started = await startTest('es');
    assert.equal(started.state, 'waiting');
    const texts = started.transcript.map((l: any) => l.text);
    assert.ok(texts.includes('Error 3005'), texts.join(' | '));
    assert.equal(started.log.find((e: any) => e.code === 3005)?.nodeId, 'eout');
  });

  it('ends the Session with the error when the error branch is not wired, and Catch nodes see it', async () => {
    const z = uid('tab');
    await red.deploy([
      tab(z, 'Errors unwired'),
      node('session-start', 'us', z, {}, [['uout']]),
      node('output-task', 'uout', z, { text: 'x', attachments: 'ref-session:nothing' }, [['uin'], []]),
      node('input-task', 'uin', z, { prompt: 'never', resultVariable: 'a' }, [[]]),
      node('catch', 'ucatch', z, { scope: null, uncaught: false }, [['udebug']]),
      node('function', 'udebug', z, { func: 'node.warn("caught " + msg.error.code + " " + msg.session.id); return null;', outputs: 1 }, [[]]),
    ]);
    const started = await startTest('us');
    assert.equal(started.state, 'ended');
    assert.equal(started.log.at(-1).code, 3005);
    assert.match(started.endReason, /^3005 TaskInvalidData/);
    await red.waitForLog(new RegExp(`caught 3005 ${started.id}`));
  });

  it('ends the Session when the token stops without an EndTask', async () => {
    const z = uid('tab');
    await red.deploy([
      tab(z, 'No end'),
      node('session-start', 'ns', z, {}, [['nchange']]),
      node('change', 'nchange', z, { rules: [{ t: 'set', p: 'vars.seen', pt: 'msg', to: 'yes', tot: 'str' }] }, [['nout']]),
      node('output-task', 'nout', z, { text: 'bye {seen}' }, [[], []]),
    ]);
    const started = await startTest('ns');
    const ended = await eventually(async () => {
      const res = await red.admin('GET', `/channel-sessions/sessions/${started.id}`);
      return res.body.state === 'ended' ? res.body : undefined;
    }, 3000, 'the Session to end');
    assert.match(ended.endReason, /without reaching an EndTask/);
    assert.equal(ended.transcript.find((l: any) => l.from === 'bot').text, 'bye yes');
  });

  it('asks for an InputTask answer with no reply timeout on output 3', async () => {
    const z = uid('tab');
    await red.deploy([
      tab(z, 'Timeout'),
      node('session-start', 'ts', z, {}, [['tin']]),
      node('input-task', 'tin', z, { prompt: 'quick!', resultVariable: 'a', timeout: 0.3, outputs: 3 }, [[], [], ['tout']]),
      node('output-task', 'tout', z, { text: 'too slow' }, [['tend']]),
      node('end-task', 'tend', z, {}),
    ]);
    const started = await startTest('ts');
    assert.equal(started.state, 'waiting');
    const done = await eventually(async () => {
      const res = await red.admin('GET', `/channel-sessions/sessions/${started.id}`);
      return res.body.state === 'completed' ? res.body : undefined;
    }, 3000, 'the timeout branch');
    assert.ok(done.transcript.some((l: any) => l.text === 'too slow'));
  });

  it('ends a Session from the Sessions view', async () => {
    const z = uid('tab');
    await red.deploy([
      tab(z, 'Endable'),
      node('session-start', 'xs', z, {}, [['xin']]),
      node('input-task', 'xin', z, { prompt: 'wait', resultVariable: 'a' }, [[]]),
    ]);
    const started = await startTest('xs');
    const list = await red.admin('GET', '/channel-sessions/sessions?channel=Chat');
    assert.ok(list.body.some((s: any) => s.id === started.id && s.waitingAt.nodeId === 'xin'));
    const ended = await red.admin('DELETE', `/channel-sessions/sessions/${started.id}`);
    assert.equal(ended.status, 200);
    assert.equal(ended.body.state, 'ended');
    const again = await red.admin('POST', `/channel-sessions/test-sessions/${started.id}/messages`, { text: 'hi' });
    assert.equal(again.status, 409);
  });
});
