import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { NodeRed } from './harness/node-red';
import { node, tab } from './harness/flows';
import { loopbackEnvironment, outbox, send, startWithLoopback } from './harness/loopback';

describe('conversations under load', { timeout: 120000 }, () => {
  let red: NodeRed;
  before(async () => {
    red = await startWithLoopback();
  });
  after(async () => red?.close());

  it('200 concurrent conversations x 5 messages: each handled in arrival order, one Session each', async () => {
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
    const results = await Promise.all(conversations.flatMap((key) =>
      [0, 1, 2, 3, 4].map((m) => send(red, 'envL', key, `${key}-m${m}`).then((r) => ({ key, ...r })))));
    for (const key of conversations) {
      const mine = results.filter((r) => r.key === key);
      assert.equal(mine.filter((r) => r.kind === 'started').length, 1, `${key}: exactly one start`);
      assert.equal(mine.filter((r) => r.kind === 'continued').length, 4, `${key}: four continue it`);
      assert.equal(new Set(mine.map((r) => r.sessionId)).size, 1, `${key}: one Session`);
    }
    const sessions = (await red.admin('GET', '/channel-sessions/sessions?environment=envL')).body as Array<{ id: string; conversation: string }>;
    assert.equal(sessions.length, 200);
    for (const key of ['c0', 'c57', 'c199']) {
      const session = sessions.find((s) => s.conversation === key);
      assert.ok(session, key);
      const detail = (await red.admin('GET', `/channel-sessions/sessions/${session.id}`)).body;
      const { arrived, said } = await outbox(red, key);
      assert.deepEqual(detail.vars.seen, arrived, `${key}: handled in arrival order`);
      assert.deepEqual(said, arrived.slice(1), `${key}: every reply, in order`);
    }
  });
});
