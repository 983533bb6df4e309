import should from 'should';
import { NodeRed, eventually } from '../harness/node-red';
import { echoProcess, loopbackEnvironment, send, startWithLoopback } from '../harness/loopback';

describe('plan limit and idle expiry', function () {
  this.timeout(60000);
  let red: NodeRed;
  before(async function () {
    red = await startWithLoopback({
      settings: { channelSessions: { idleTimeout: { Loopback: 0.5 }, sweepInterval: 0.1 } },
    });
  });
  after(async () => red?.close());

  it('maxSessions: a start past the limit fails with a log line; live Sessions go on; a freed place starts again', async function () {
    // On LoopbackOther, whose Sessions keep the default idle timeout: on the Loopback Channel's
    // 0.5 s (the next case's) a Session could expire between two sends on a busy machine and free
    // its place before the limit is tried.
    const other = 'LoopbackOther';
    await red.deploy([loopbackEnvironment('envP', { maxSessions: 2 }), ...echoProcess('pP', 'envP', 'pP', 'loopback-other-start')]);
    const a = await send(red, 'envP', 'a', 'hi', other);
    const b = await send(red, 'envP', 'b', 'hi', other);
    should(a.kind).equal('started');
    should(b.kind).equal('started');
    const c = await send(red, 'envP', 'c', 'hi', other);
    should(c.kind).equal('refused');
    should(c.reason ?? '').match(/limit of 2 live Sessions \(maxSessions\)/);
    await red.waitForLog(/limit of 2 live Sessions/);
    should((await send(red, 'envP', 'a', 'still here', other)).kind).equal('continued');
    await red.admin('DELETE', `/channel-sessions/sessions/${b.sessionId}`);
    should((await send(red, 'envP', 'c', 'hi again', other)).kind).equal('started', 'the conversation was not held by the failed start');
  });

  it('a Session idle past its Channel timeout expires and releases its conversation', async function () {
    await red.deploy([loopbackEnvironment('envE'), ...echoProcess('pE', 'envE')]);
    const first = await send(red, 'envE', 'idle', 'hi');
    const ended = await eventually(
      async () => {
        const res = await red.admin('GET', `/channel-sessions/sessions/${first.sessionId}`);
        return res.body.state === 'ended' ? res.body : undefined;
      },
      5000,
      'expiry',
    );
    should(ended.endReason).match(/expired after 0.5 s without a message/);
    const next = await send(red, 'envE', 'idle', 'back');
    should(next.kind).equal('started');
    should(next.sessionId).not.equal(first.sessionId);
  });
});
