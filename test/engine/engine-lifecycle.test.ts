import { join } from 'node:path';
import should from 'should';
import type { DatabaseConstructor } from '../../src/stores/sqlite/sqlite';
import { NodeRed, eventually } from '../harness/node-red';
import { watchStatuses } from '../harness/comms';
import { node, tab } from '../harness/flows';
import { echoProcess, loopbackEnvironment, outbox, send, startWithLoopback } from '../harness/loopback';

const { loadSqlite } = require('../../../dist/stores/sqlite/sqlite.js');
const Database = loadSqlite() as DatabaseConstructor;

describe('Sessions across restarts and redeploys', function () {
  this.timeout(60000);
  let red: NodeRed;
  before(async function () {
    red = await startWithLoopback({
      settings: {
        contextStorage: { default: { module: 'memory' }, file: { module: 'localfilesystem', config: { flushInterval: 1 } } },
        runtimeState: { enabled: true },
      },
    });
  });
  after(async () => red?.close());

  it('a Session waiting at an InputTask survives a Node-RED restart with a persistent store', async function () {
    await red.deploy([loopbackEnvironment('envR', { sessionStore: 'file' }), ...echoProcess('pR', 'envR')]);
    const first = await send(red, 'envR', 'alice', 'hi');
    should(first.kind).equal('started');
    await red.restart();
    await red.waitForLog(/1 waiting Sessions restored/);
    const second = await send(red, 'envR', 'alice', 'after restart');
    should(second.kind).equal('continued');
    should(second.sessionId).equal(first.sessionId);
    const detail = (await red.admin('GET', `/channel-sessions/sessions/${first.sessionId}`)).body;
    should(detail.vars.answer).equal('after restart');
    should(detail.vars.loop.text).equal('hi', 'variables written before the restart are kept');
    should((await outbox(red, 'alice')).said).eql(['got after restart', 'next?']);
  });

  it('a memory store forgets waiting Sessions on restart: the next message starts a new one', async function () {
    await red.deploy([loopbackEnvironment('envM', { sessionStore: 'default' }), ...echoProcess('pM', 'envM')]);
    const first = await send(red, 'envM', 'bob', 'hi');
    await red.restart();
    const second = await send(red, 'envM', 'bob', 'again');
    should(second.kind).equal('started');
    should(second.sessionId).not.equal(first.sessionId);
  });

  it('a redeploy that keeps the waiting node keeps the Session waiting there', async function () {
    const flows = [loopbackEnvironment('envD'), ...echoProcess('pD', 'envD')];
    await red.deploy(flows);
    const first = await send(red, 'envD', 'carol', 'hi');
    const changed = flows.map((n) => (n.id === 'pD-reply' ? { ...n, text: 'changed {answer}' } : n));
    await red.deploy(changed);
    const second = await send(red, 'envD', 'carol', 'x');
    should(second.kind).equal('continued');
    should(second.sessionId).equal(first.sessionId);
    should((await outbox(red, 'carol')).said).containEql('changed x');
  });

  it('a redeploy that removes the waiting node ends the Session with a clear log line', async function () {
    const flows = [loopbackEnvironment('envX'), ...echoProcess('pX', 'envX')];
    await red.deploy(flows);
    const first = await send(red, 'envX', 'dave', 'hi');
    const withoutInput = flows.filter((n) => n.id !== 'pX-ask').map((n) => (n.id === 'pX-hello' ? { ...n, wires: [['pX-end'], []] } : n));
    withoutInput.push(node('end-task', 'pX-end', 'pX'));
    await red.deploy(withoutInput);
    await red.waitForLog(new RegExp(`Session ${first.sessionId} ended: the input-task it was waiting at \\(pX-ask\\) was removed`));
    const detail = (await red.admin('GET', `/channel-sessions/sessions/${first.sessionId}`)).body;
    should(detail.state).equal('ended');
    const next = await send(red, 'envX', 'dave', 'hello again');
    should(next.kind).equal('started');
    should(next.sessionId).not.equal(first.sessionId);
  });

  it("a message handled before the removed node's Session was ended ends that Session too, then starts a new one", async function () {
    const flows = [loopbackEnvironment('envY'), ...echoProcess('pY', 'envY')];
    await red.deploy(flows);
    const first = await send(red, 'envY', 'erin', 'hi');
    // With the flows stopped the message is recorded and waits; it is the conversation's first
    // item when the flows without its waiting node start, ahead of the end the deploy records.
    (await red.admin('POST', '/flows/state', { state: 'stop' })).status.should.equal(200);
    const next = send(red, 'envY', 'erin', 'hello again');
    // Its InputTask replaced by another: the new Session waits there, so its commit is not the
    // conversation's last, and no later step finds the old Session to end.
    const replaced = flows.map((n) =>
      n.id === 'pY-ask' ? { ...n, id: 'pY-ask2' } : n.id === 'pY-hello' || n.id === 'pY-reply' ? { ...n, wires: [['pY-ask2'], []] } : n,
    );
    const deployed = await red.admin('POST', '/flows', { flows: replaced }, { 'Node-RED-API-Version': 'v2', 'Node-RED-Deployment-Type': 'full' });
    should(deployed.status).equal(200);
    // Deployed while stopped, the flows stay stopped until started.
    (await red.admin('POST', '/flows/state', { state: 'start' })).status.should.equal(200);
    const started = await next;
    should(started.kind).equal('started');
    should(started.sessionId).not.equal(first.sessionId);
    should((await red.admin('GET', `/channel-sessions/sessions/${started.sessionId}`)).body.waitingAt.nodeId).equal('pY-ask2');
    const old = (await red.admin('GET', `/channel-sessions/sessions/${first.sessionId}`)).body;
    should(old.state).equal('ended');
    should(old.endReason).match(/the input-task it was waiting at \(pY-ask\) was removed/);
    should(old.history.map((line: { text: string }) => line.text)).eql(['hi', 'hello hi', 'next?']);
    // The Sessions view lists it among the ended ones, once, and not among the live ones.
    const listed = async (query: string) =>
      ((await red.admin('GET', `/channel-sessions/sessions?environment=envY${query}`)).body as Array<{ id: string; state: string }>).filter(
        (x) => x.id === first.sessionId,
      );
    should(await listed('')).eql([]);
    should((await listed('&ended=true')).map((x) => x.state)).eql(['ended']);
    // Its end was committed: nothing of it is left in the store's file.
    const db = new Database(join(red.userDir, 'channel-sessions.db'), { readOnly: true } as { timeout?: number });
    try {
      for (const table of ['sessions', 'history', 'session_log', 'timers']) {
        const column = table === 'sessions' ? 'id' : 'session_id';
        should(Number(db.prepare(`SELECT count(*) AS n FROM ${table} WHERE ${column} = ?`).get(first.sessionId)?.n)).equal(0, table);
      }
    } finally {
      db.close();
    }
  });

  it('two Processes bound to one Environment and Channel: the first in flow order serves, both say so', async function () {
    const statuses = await watchStatuses(red);
    await red.deploy([loopbackEnvironment('envT'), ...echoProcess('pT1', 'envT', 'First'), ...echoProcess('pT2', 'envT', 'Second')]);
    await red.waitForLog(/Environment "envT env" \(Loopback\) has starts in 2 Processes: "First" serves/);
    const winner = await eventually(() => statuses.get('pT1-start'), 3000, 'the serving start status');
    const loser = await eventually(() => statuses.get('pT2-start'), 3000, 'the other start status');
    statuses.close();
    should(winner.text ?? '').match(/^serves envT env; also bound in Second/);
    should(winner.fill).equal('yellow');
    should(loser.text ?? '').match(/^not serving: "First" serves envT env/);
    const started = await send(red, 'envT', 'erin', 'hi');
    const detail = (await red.admin('GET', `/channel-sessions/sessions/${started.sessionId}`)).body;
    should(detail.process).equal('pT1');
  });

  it('dispatch: a shared Start serving the Environment runs when no channel start exists, without a channel variable', async function () {
    await red.deploy([
      loopbackEnvironment('envS'),
      tab('pS', 'Shared'),
      node('session-start', 'pS-start', 'pS', { teamchat: '', voice: '', messaging: '', loopback: 'envS' }, [['pS-out']]),
      node('output-task', 'pS-out', 'pS', { text: 'shared {loop.text}{execution.channelSender}' }, [['pS-end'], []]),
      node('end-task', 'pS-end', 'pS'),
    ]);
    // session-start names Environments per module; the loopback fixture's module key is `loopback`.
    const started = await send(red, 'envS', 'frank', 'hi');
    should(started.kind).equal('started');
    should((await outbox(red, 'frank')).said).eql(['shared frank']);
  });

  it('dispatch: a Process whose only start serves another Channel refuses with 8025 and the Session ends', async function () {
    await red.deploy([
      loopbackEnvironment('envO'),
      tab('pO', 'Other'),
      node('loopback-other-start', 'pO-start', 'pO', { environment: 'envO' }, [['pO-out']]),
      node('output-task', 'pO-out', 'pO', { text: 'never' }, [[], []]),
    ]);
    const started = await send(red, 'envO', 'gina', 'hi', 'Loopback');
    const detail = (await red.admin('GET', `/channel-sessions/sessions/${started.sessionId}`)).body;
    should(detail.state).equal('ended');
    should(detail.error.code).equal(8025);
    should((await outbox(red, 'gina')).said).eql([]);
    const again = await send(red, 'envO', 'gina', 'hi', 'LoopbackOther');
    should(again.kind).equal('started', 'its own Channel still starts');
  });

  it('no Process for the Environment: the message starts nothing and says why', async function () {
    await red.deploy([loopbackEnvironment('envN')]);
    const res = await send(red, 'envN', 'hank', 'hi');
    should(res.kind).equal('refused');
    should(res.reason ?? '').match(/No Process has a start for Environment "envN env"/);
  });
});
