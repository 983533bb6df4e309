import should from 'should';
import { NodeRed } from '../harness/node-red';
import { node, tab } from '../harness/flows';
import { loopbackEnvironment, outbox, send, startWithLoopback } from '../harness/loopback';

describe('conversations under load', function () {
  this.timeout(120000);
  let red: NodeRed;
  before(async function () {
    red = await startWithLoopback();
  });
  after(async () => red?.close());

  it('200 concurrent conversations x 5 messages: each handled in arrival order, one Session each', async function () {
    const z = 'pLoad';
    await red.deploy([
      loopbackEnvironment('envL'),
      tab(z, 'Load'),
      node('loopback-start', 'l-start', z, { environment: 'envL', variable: 'loop' }, [['l-first']]),
      node('function', 'l-first', z, { func: 'msg.vars.seen = [msg.vars.loop.text]; return msg;', outputs: 1 }, [['l-ask']]),
      node('input-task', 'l-ask', z, { prompt: '', resultVariable: 'answer' }, [['l-record'], []]),
      node('function', 'l-record', z, { func: 'msg.vars.seen.push(msg.vars.answer); return msg;', outputs: 1 }, [['l-say']]),
      node('output-task', 'l-say', z, { text: '{answer}' }, [['l-ask'], []]),
    ]);
    const conversations = Array.from({ length: 200 }, (_, i) => `c${i}`);
    const results = await Promise.all(
      conversations.flatMap((key) => [0, 1, 2, 3, 4].map((m) => send(red, 'envL', key, `${key}-m${m}`).then((r) => ({ key, ...r })))),
    );
    for (const key of conversations) {
      const mine = results.filter((r) => r.key === key);
      should(mine.filter((r) => r.kind === 'started').length).equal(1, `${key}: exactly one start`);
      should(mine.filter((r) => r.kind === 'continued').length).equal(4, `${key}: four continue it`);
      should(new Set(mine.map((r) => r.sessionId)).size).equal(1, `${key}: one Session`);
    }
    const sessions = (await red.admin('GET', '/channel-sessions/sessions?environment=envL')).body as Array<{ id: string; conversation: string }>;
    should(sessions.length).equal(200);
    for (const key of ['c0', 'c57', 'c199']) {
      const session = sessions.find((s) => s.conversation === key);
      should.exist(session, key);
      const detail = (await red.admin('GET', `/channel-sessions/sessions/${session!.id}`)).body;
      const { arrived, said } = await outbox(red, key);
      should(detail.vars.seen).eql(arrived, `${key}: handled in arrival order`);
      should(said).eql(arrived.slice(1), `${key}: every reply, in order`);
    }
  });
});
