import should from 'should';
import { chain, tab } from '../harness/flows';
import { eventually, type NodeRed } from '../harness/node-red';
import { echoProcess, loopbackEnvironment, send, startWithLoopback } from '../harness/loopback';

/**
 * A flow that puts a value JSON cannot hold into the Session's variables (a BigInt) is the flow's
 * fault: that Session ends with 4001, and the store is not taken for broken (no 503s, no
 * "Session store unavailable"), so other conversations go on.
 */
describe('a Session whose variables cannot be saved', function () {
  this.timeout(60000);
  let red: NodeRed;
  before(async function () {
    red = await startWithLoopback();
    await red.deploy([
      loopbackEnvironment('envBig'),
      tab('pBig', 'BigInt'),
      ...chain('pBig', [
        ['loopback-start', 'bStart', { environment: 'envBig', variable: 'loop' }],
        ['function', 'bFn', { func: 'msg.vars.big = BigInt(12345678901234567890n); return msg;', outputs: 1 }],
        ['input-task', 'bAsk', { prompt: 'next?', resultVariable: 'answer' }],
        ['end-task', 'bEnd'],
      ]),
      loopbackEnvironment('envOk'),
      ...echoProcess('pOk', 'envOk'),
    ]);
  });
  after(async () => red?.close());

  it('ends with 4001 in its log, and the other conversations carry on', async function () {
    const first = await send(red, 'envBig', 'ann', 'hi');
    should(first.kind).equal('started');
    const detail = await eventually(
      async () => {
        const d = (await red.admin('GET', `/channel-sessions/sessions/${first.sessionId}`)).body;
        return d?.state === 'ended' ? d : undefined;
      },
      10000,
      'the Session to end',
    );
    should(detail.log.at(-1).code).equal(4001);
    should(detail.log.at(-1).message).match(/variables cannot be saved/);
    should(detail.vars.big).equal('12345678901234567890');
    // The conversation is not wedged: its next message starts afresh (and ends the same way).
    should((await send(red, 'envBig', 'ann', 'again')).kind).equal('started');
    // Other conversations on the same store are served.
    should((await send(red, 'envOk', 'bob', 'hi')).kind).equal('started');
    should((await send(red, 'envOk', 'bob', 'x')).kind).equal('continued');
    should(red.logs.join('\n')).not.match(/Session store unavailable|could not save a Session step/);
  });
});
