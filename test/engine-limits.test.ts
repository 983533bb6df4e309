import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { NodeRed, eventually } from './harness/node-red';
import { echoProcess, loopbackEnvironment, send, startWithLoopback } from './harness/loopback';

describe('plan limit and idle expiry', { timeout: 60000 }, () => {
  let red: NodeRed;
  before(async () => {
    red = await startWithLoopback({
      settings: { channelSessions: { idleTimeout: { Loopback: 0.5 }, sweepInterval: 0.1 } },
    });
  });
  after(async () => red?.close());

  it('maxSessions: a start past the limit fails with a log line; live Sessions go on; a freed place starts again', async () => {
    await red.deploy([loopbackEnvironment('envP', { maxSessions: 2 }), ...echoProcess('pP', 'envP')]);
    const a = await send(red, 'envP', 'a', 'hi');
    const b = await send(red, 'envP', 'b', 'hi');
    assert.equal(a.kind, 'started');
    assert.equal(b.kind, 'started');
    const c = await send(red, 'envP', 'c', 'hi');
    assert.equal(c.kind, 'refused');
    assert.match(c.reason ?? '', /limit of 2 live Sessions \(maxSessions\)/);
    await red.waitForLog(/limit of 2 live Sessions/);
    assert.equal((await send(red, 'envP', 'a', 'still here')).kind, 'continued');
    await red.admin('DELETE', `/channel-sessions/sessions/${b.sessionId}`);
    assert.equal((await send(red, 'envP', 'c', 'hi again')).kind, 'started', 'the conversation was not held by the failed start');
  });

  it('a Session idle past its Channel timeout expires and releases its conversation', async () => {
    await red.deploy([loopbackEnvironment('envE'), ...echoProcess('pE', 'envE')]);
    const first = await send(red, 'envE', 'idle', 'hi');
    const ended = await eventually(async () => {
      const res = await red.admin('GET', `/channel-sessions/sessions/${first.sessionId}`);
      return res.body.state === 'ended' ? res.body : undefined;
    }, 5000, 'expiry');
    assert.match(ended.endReason, /expired after 0.5 s without a message/);
    const next = await send(red, 'envE', 'idle', 'back');
    assert.equal(next.kind, 'started');
    assert.notEqual(next.sessionId, first.sessionId);
  });
});
