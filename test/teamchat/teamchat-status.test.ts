import should from 'should';
import { node, tab, uid, type FlowNode } from '../harness/flows';
import { NodeRed, eventually } from '../harness/node-red';
import { FakeSlack } from '../fakes/slack-api';
import { SlackEvents } from '../fakes/slack-events';
import { SIGNING_SECRET, teamchatEnvironment } from '../fakes/slack-flows';

/** Set status (Slack): assistant.threads.setStatus in the Session's thread, kept up, cleared by the next post. */
describe('team chat: Set status', function () {
  this.timeout(30000);
  let red: NodeRed;
  let fake: FakeSlack;
  let slack: SlackEvents;
  let envId: string;

  before(async function () {
    fake = await FakeSlack.start();
    // A status is set again every 100 ms here (90 s by default), so a test sees it kept up.
    red = await NodeRed.start({ settings: { channelSessions: { statusRefresh: 0.1 } } });
  });
  after(async function () {
    await red?.close();
    await fake?.close();
  });

  /** start -> Set status -> a model that takes `thinkMs` -> Output -> Input (the Session waits); without `thinkMs`, straight to the Input, no post. */
  async function deploy(status: Record<string, unknown>, thinkMs?: number) {
    fake.reset();
    const z = uid('tab');
    envId = uid('env');
    const token = `tok${uid('t')}BBBBBBBBBBBBBBBBBBBB`;
    const flow: FlowNode[] = [
      tab(z, 'Status'),
      teamchatEnvironment(envId, token, fake),
      node('teamchat-start', uid('s'), z, { environment: envId, variable: 'teamchat' }, [['status']]),
      node('teamchat-status', 'status', z, status, [[thinkMs === undefined ? 'more' : 'model'], ['failed']]),
      node('function', 'model', z, { func: `setTimeout(() => { node.send(msg); node.done(); }, ${thinkMs}); return null;`, outputs: 1 }, [['answer']]),
      node('output-task', 'answer', z, { text: 'The answer to {teamchat.text}' }, [['more'], []]),
      node('input-task', 'more', z, { prompt: '', resultVariable: 'more' }, [[], []]),
      node('output-task', 'failed', z, { text: 'Status failed: {error.code}' }, [['more'], []]),
    ];
    await red.deploy(flow);
    slack = new SlackEvents(red, token, SIGNING_SECRET, fake.team);
  }

  async function sessionWaiting(): Promise<any> {
    return eventually(
      async () => {
        const list = (await red.admin('GET', `/channel-sessions/sessions?environment=${envId}&ended=true`)).body as any[];
        return list[0]?.state === 'waiting' ? (await red.admin('GET', `/channel-sessions/sessions/${list[0].id}`)).body : undefined;
      },
      8000,
      'the Session to wait',
    );
  }

  it('sets the status in the thread with its loading messages, keeps it up while the flow works, and stops at the next post', async function () {
    await deploy({ status: 'is thinking about {teamchat.text}…', loadingMessages: 'Reading the docs\n\nWriting {teamchat.text}' }, 800);
    const first = slack.direct('U1', 'rates');
    should((await slack.post(slack.envelope(first))).status).equal(200);
    await sessionWaiting();
    const statuses = fake.callsOf('assistant.threads.setStatus');
    const post = fake.callsOf('chat.postMessage')[0];
    should(post.body.text).equal('The answer to rates');
    should(statuses[0].body).eql({
      channel_id: first.channel,
      thread_ts: first.ts,
      status: 'is thinking about rates…',
      loading_messages: ['Reading the docs', 'Writing rates'],
    });
    // Set again, as it was, while the model worked (every 100 ms of its 800 here)...
    const before = statuses.filter((c) => c.at <= post.at);
    should(before.length).be.aboveOrEqual(3);
    for (const again of before) should(again.body).eql(statuses[0].body);
    should(statuses.every((c) => c.result?.ok === true)).be.true();
    // ... and no more once the answer was posted (Slack clears it then): several intervals later, still none after it.
    await new Promise((r) => setTimeout(r, 500));
    should(fake.callsOf('assistant.threads.setStatus').filter((c) => c.at > post.at)).eql([]);
  });

  it('stops keeping a status up when its Session ends', async function () {
    await deploy({ status: 'is thinking…' });
    const first = slack.direct('U1', 'slow one');
    should((await slack.post(slack.envelope(first))).status).equal(200);
    await eventually(() => fake.callsOf('assistant.threads.setStatus').length >= 2, 5000, 'the status kept up');
    const list = (await red.admin('GET', `/channel-sessions/sessions?environment=${envId}`)).body as any[];
    should((await red.admin('DELETE', `/channel-sessions/sessions/${list[0].id}`)).status).equal(200);
    const ended = Date.now();
    await new Promise((r) => setTimeout(r, 500));
    // A call already on its way as the Session ended may land just after; none is sent later.
    should(fake.callsOf('assistant.threads.setStatus').filter((c) => c.at > ended + 150)).eql([]);
  });

  it("takes the error branch with Slack's refusal, and keeps nothing up", async function () {
    await deploy({ status: 'is thinking…' }, 0);
    fake.failures.set('assistant.threads.setStatus', 'invalid_thread_ts');
    const first = slack.direct('U1', 'hello');
    should((await slack.post(slack.envelope(first))).status).equal(200);
    const session = await sessionWaiting();
    should(fake.callsOf('chat.postMessage').map((c) => c.body.text)).eql(['Status failed: 4001']);
    should(session.log.some((l: any) => l.code === 4001 && /invalid_thread_ts/.test(l.message))).be.true(JSON.stringify(session.log));
    should(fake.callsOf('assistant.threads.setStatus').length).equal(1);
  });
});
