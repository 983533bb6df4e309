import should from 'should';
import { NodeRed, eventually } from '../harness/node-red';
import { chain, node, tab, uid } from '../harness/flows';

/** The foundation through the test chat admin routes: a Process talks on the Chat Channel. */
describe('test chat: Start -> Output -> Input -> Output -> End', function () {
  let red: NodeRed;
  before(async function () {
    red = await NodeRed.start({ settings: { channelSessions: { fileStorage: 'workspace' } } });
  });
  after(async () => red?.close());

  async function startTest(startId: string, testData?: Record<string, unknown>) {
    const res = await red.admin('POST', '/channel-sessions/test-sessions', { start: startId, testData });
    should(res.status).equal(201, res.text);
    return res.body;
  }

  async function say(sessionId: string, text: string, files?: unknown[]) {
    const res = await red.admin('POST', `/channel-sessions/test-sessions/${sessionId}/messages`, { text, files });
    should(res.status).equal(200, res.text);
    return res.body;
  }

  it('runs a conversation with variables and placeholders, then completes', async function () {
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
    should(started.state).equal('waiting');
    should(started.channel).equal('Chat');
    should(started.isTest).equal(true);
    should(started.waitingAt.nodeId).equal('in1');
    should(started.transcript.map((l: any) => [l.from, l.kind, l.text])).eql([
      ['user', 'message', 'hello there'],
      ['bot', 'message', 'You said "Chat" first: '],
      ['bot', 'prompt', 'What is your name?'],
    ]);
    const finished = await say(started.id, 'Ada');
    should(finished.state).equal('completed');
    should(finished.vars.name).equal('Ada');
    should(finished.vars.name_files).eql([]);
    should(finished.vars.execution.sessionId).equal(started.id);
    const lines = finished.transcript.map((l: any) => [l.from, l.text]);
    should(lines.slice(3)).eql([
      ['user', 'Ada'],
      ['bot', 'Nice to meet you, Ada.'],
      ['system', 'EndTask reached'],
    ]);
    const live = await red.admin('GET', '/channel-sessions/sessions');
    should(live.body.filter((s: any) => s.id === started.id).length).equal(0, 'a completed Session is no longer live');
  });

  it('keeps files sent in the chat as a file list and resolves ref-session: Attachments', async function () {
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
    const done = await say(started.id, 'here', [
      { name: 'a.txt', type: 'text/plain', data },
      { name: 'b.pdf', data },
    ]);
    should(done.state).equal('completed', JSON.stringify(done.transcript));
    should(done.vars.docs.count).equal(2);
    should(done.vars.docs.names).equal('a.txt, b.pdf');
    should(done.vars.docs['0'].size).equal(10);
    should(done.vars.docs['1'].type).equal('application/pdf');
    const out = done.transcript.find((l: any) => l.text.startsWith('Got'));
    should(out.text).equal('Got 2: a.txt, b.pdf; first is a.txt');
    should(out.files).eql(['a.txt', 'b.pdf']);
  });

  it('routes an error to a wired error branch with msg.error and the Session goes on', async function () {
    const z = uid('tab');
    await red.deploy([
      tab(z, 'Errors wired'),
      node('session-start', 'es', z, {}, [['eout']]),
      node('output-task', 'eout', z, { text: 'x', attachments: 'ref-workspace:nope.pdf' }, [[], ['eerr']]),
      node('output-task', 'eerr', z, { text: 'Error {error.code}' }, [['ein']]),
      node('input-task', 'ein', z, { prompt: 'still here', resultVariable: 'a' }, [[]]),
    ]);
    const started = await startTest('es');
    should(started.state).equal('waiting');
    const texts = started.transcript.map((l: any) => l.text);
    should(texts).containEql('Error 3005');
    should(started.log.find((e: any) => e.code === 3005)?.nodeId).equal('eout');
  });

  it('ends the Session with the error when the error branch is not wired, and Catch nodes see it', async function () {
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
    should(started.state).equal('ended');
    should(started.log.at(-1).code).equal(3005);
    should(started.endReason).match(/^3005 TaskInvalidData/);
    await red.waitForLog(new RegExp(`caught 3005 ${started.id}`));
  });

  it('ends the Session when the token stops without an EndTask', async function () {
    const z = uid('tab');
    await red.deploy([
      tab(z, 'No end'),
      node('session-start', 'ns', z, {}, [['nchange']]),
      node('change', 'nchange', z, { rules: [{ t: 'set', p: 'vars.seen', pt: 'msg', to: 'yes', tot: 'str' }] }, [['nout']]),
      node('output-task', 'nout', z, { text: 'bye {seen}' }, [[], []]),
    ]);
    const started = await startTest('ns');
    const ended = await eventually(
      async () => {
        const res = await red.admin('GET', `/channel-sessions/sessions/${started.id}`);
        return res.body.state === 'ended' ? res.body : undefined;
      },
      3000,
      'the Session to end',
    );
    should(ended.endReason).match(/without reaching an EndTask/);
    should(ended.transcript.find((l: any) => l.from === 'bot').text).equal('bye yes');
  });

  it('asks for an InputTask answer with no reply timeout on output 3', async function () {
    const z = uid('tab');
    await red.deploy([
      tab(z, 'Timeout'),
      node('session-start', 'ts', z, {}, [['tin']]),
      node('input-task', 'tin', z, { prompt: 'quick!', resultVariable: 'a', timeout: 0.3, outputs: 3 }, [[], [], ['tout']]),
      node('output-task', 'tout', z, { text: 'too slow' }, [['tend']]),
      node('end-task', 'tend', z, {}),
    ]);
    const started = await startTest('ts');
    should(started.state).equal('waiting');
    const done = await eventually(
      async () => {
        const res = await red.admin('GET', `/channel-sessions/sessions/${started.id}`);
        return res.body.state === 'completed' ? res.body : undefined;
      },
      3000,
      'the timeout branch',
    );
    should(done.transcript.some((l: any) => l.text === 'too slow')).be.true();
  });

  it('ends a Session from the Sessions view', async function () {
    const z = uid('tab');
    await red.deploy([
      tab(z, 'Endable'),
      node('session-start', 'xs', z, {}, [['xin']]),
      node('input-task', 'xin', z, { prompt: 'wait', resultVariable: 'a' }, [[]]),
    ]);
    const started = await startTest('xs');
    const list = await red.admin('GET', '/channel-sessions/sessions?channel=Chat');
    should(list.body.some((s: any) => s.id === started.id && s.waitingAt.nodeId === 'xin')).be.true();
    const ended = await red.admin('DELETE', `/channel-sessions/sessions/${started.id}`);
    should(ended.status).equal(200);
    should(ended.body.state).equal('ended');
    const again = await red.admin('POST', `/channel-sessions/test-sessions/${started.id}/messages`, { text: 'hi' });
    should(again.status).equal(409);
  });

  it('answers at once when the Session to end is in a slow step: 202, and it ends once the step is over', async function () {
    const z = uid('tab');
    await red.deploy([
      tab(z, 'Slow to end'),
      node('session-start', 'ys', z, {}, [['yin']]),
      node('input-task', 'yin', z, { prompt: 'wait', resultVariable: 'a' }, [['yslow']]),
      node('delay', 'yslow', z, { pauseType: 'delay', timeout: '4', timeoutUnits: 'seconds' }, [['yout']]),
      node('output-task', 'yout', z, { text: 'done slowly' }, [[]]),
      node('end-task', 'yend', z, {}),
    ]);
    const started = await startTest('ys');
    // The answer's step now sits in the delay node for 4 s.
    void red.admin('POST', `/channel-sessions/test-sessions/${started.id}/messages`, { text: 'go' });
    await eventually(async () => (await red.admin('GET', `/channel-sessions/sessions/${started.id}`)).body.state === 'running', 5000, 'the step to be running');
    const ended = await red.admin('DELETE', `/channel-sessions/sessions/${started.id}`);
    should(ended.status).equal(202);
    should(ended.body).containEql({ ending: true, state: 'running' });
    await eventually(
      async () => (await red.admin('GET', `/channel-sessions/sessions/${started.id}`)).body.state === 'ended',
      10000,
      'the Session to end after its step',
    );
  });
});
