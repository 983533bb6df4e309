import { join } from 'node:path';
import should from 'should';
import { NodeRed, eventually } from '../harness/node-red';
import { echoProcess, loopbackEnvironment, outbox, send, startWithLoopback } from '../harness/loopback';
import { node, tab } from '../harness/flows';
import type { DatabaseConstructor } from '../../src/stores/sqlite/sqlite';

const { loadSqlite } = require('../../../dist/stores/sqlite/sqlite.js');

const IDLE_SECONDS = 1;
const EXPIRED = new RegExp(`Session expired after ${IDLE_SECONDS} s without a message`);

/**
 * Idle expiry on the durable default store, which leaves a Session's armed expiry where it is when
 * a message makes it due later: the early one fires, and its step arms it again at the real due.
 */
describe('idle expiry after the last message', function () {
  this.timeout(60000);
  const Database = loadSqlite() as DatabaseConstructor;
  let red: NodeRed;
  before(async function () {
    red = await startWithLoopback({
      settings: { channelSessions: { idleTimeout: { Loopback: IDLE_SECONDS }, sweepInterval: 0.1 } },
    });
    await red.deploy([
      loopbackEnvironment('envI'),
      ...echoProcess('pI', 'envI'),
      // A node that keeps the message and never calls done() (its code names node.done(), so the
      // function node leaves done to it): the step's token never settles.
      loopbackEnvironment('envS'),
      tab('pS'),
      node('loopback-start', 'pS-start', 'pS', { environment: 'envS', variable: 'loop' }, [['pS-hello']]),
      node('output-task', 'pS-hello', 'pS', { text: 'hello {loop.text}' }, [['pS-keep'], []]),
      node('function', 'pS-keep', 'pS', { func: 'if (msg.never) node.done();\nreturn null;', outputs: 1 }, [[]]),
    ]);
  });
  after(async () => red?.close());

  /** The Session's armed expiry, as another connection to the store's file reads it. */
  function expiryDue(sessionId: string): number | undefined {
    const db = new Database(join(red.userDir, 'channel-sessions.db'), { readOnly: true } as { timeout?: number });
    try {
      const row = db.prepare("SELECT due FROM timers WHERE session_id = ? AND kind = 'expire'").get(sessionId);
      return row ? Number(row.due) : undefined;
    } finally {
      db.close();
    }
  }

  const detailOf = async (id: string) => (await red.admin('GET', `/channel-sessions/sessions/${id}`)).body;
  const ended = (id: string, timeoutMs: number) =>
    eventually(
      async () => {
        const detail = await detailOf(id);
        return detail.state === 'ended' ? detail : undefined;
      },
      timeoutMs,
      'expiry',
    );
  const expiryLines = (detail: { log: Array<{ message: string }> }) => detail.log.filter((line) => EXPIRED.test(line.message));

  it('a message before the first due moves the expiry: the Session ends idle seconds after its last message, once', async function () {
    const first = await send(red, 'envI', 'late', 'hi');
    should(first.kind).equal('started');
    const id = String(first.sessionId);
    const opened = (await detailOf(id)).lastActivity as number;
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, opened + IDLE_SECONDS * 500 - Date.now())));
    should((await send(red, 'envI', 'late', 'still here')).kind).equal('continued');
    const last = (await detailOf(id)).lastActivity as number;
    should(last).be.above(opened);
    // The store left the expiry armed at the first due; once it fired, the step armed it at the real one.
    should(expiryDue(id)).equal(opened + IDLE_SECONDS * 1000);
    await eventually(() => expiryDue(id) === last + IDLE_SECONDS * 1000, IDLE_SECONDS * 3000, 'the expiry armed again');
    const between = await detailOf(id);
    should(between.state).equal('waiting', 'the Session is live after the first due');
    should(between.waitingAt.nodeId).equal('pI-ask');
    should(between.lastActivity).equal(last, 'arming the expiry again is no activity');
    should(expiryLines(between)).eql([]);

    const end = await ended(id, IDLE_SECONDS * 5000);
    should(end.lastActivity).not.be.below(last + IDLE_SECONDS * 1000);
    should(end.endReason).match(EXPIRED);
    should(expiryLines(end)).have.length(1);
    // Nothing was said for the early expiry: the replies are those of the two messages.
    should((await outbox(red, 'late')).said).eql(['hello hi', 'next?', 'got still here', 'next?']);
  });

  it('a Session idle from its first message expires at that due and says so once', async function () {
    const first = await send(red, 'envI', 'idle', 'hi');
    const id = String(first.sessionId);
    const opened = (await detailOf(id)).lastActivity as number;
    const end = await ended(id, IDLE_SECONDS * 5000);
    should(end.lastActivity).not.be.below(opened + IDLE_SECONDS * 1000);
    should(end.endReason).match(EXPIRED);
    should(expiryLines(end)).have.length(1);
    should(expiryDue(id)).be.undefined();
    should((await send(red, 'envI', 'idle', 'back')).kind).equal('started');
  });

  it('a step whose token a node keeps without calling done() ends at the idle timeout, and the messages behind it are handled', async function () {
    const first = send(red, 'envS', 'kept', 'one');
    await eventually(async () => (await outbox(red, 'kept')).said.length === 1, 5000, 'the first reply');
    const second = send(red, 'envS', 'kept', 'two');
    const [one, two] = await Promise.all([first, second]);
    should(one.kind).equal('started');
    should(two.kind).equal('started');
    should(two.sessionId).not.equal(one.sessionId);
    for (const id of [one.sessionId, two.sessionId]) {
      const detail = await detailOf(String(id));
      should(detail.state).equal('ended');
      should(detail.endReason).match(/its step did not finish within the idle timeout \(1 s\): a node in its path kept the message without calling done\(\)/);
    }
    should((await outbox(red, 'kept')).said).eql(['hello one', 'hello two']);
    await red.waitForLog(new RegExp(`Session ${one.sessionId}: its step did not finish within the idle timeout`));
  });
});
