import should from 'should';
import { node, tab, uid, type FlowNode } from '../harness/flows';
import { Hold } from '../harness/hold';
import { NodeRed, eventually } from '../harness/node-red';
import { FakeSlack } from '../fakes/slack-api';
import { SlackEvents } from '../fakes/slack-events';
import { SIGNING_SECRET, teamchatEnvironment } from '../fakes/slack-flows';

/**
 * Stream reply across a deploy: the answer's first part is streaming in Slack when the flows are
 * deployed, its step waiting on a slow request for the rest. The step goes on in the new flows;
 * its answer goes on in the same message and finishes once.
 */
describe('team chat: a deploy in the middle of a Stream reply', function () {
  this.timeout(60000);
  let fake: FakeSlack;
  let hold: Hold;
  let red: NodeRed;

  before(async function () {
    fake = await FakeSlack.start();
    red = await NodeRed.start({ settings: { channelSessions: { streamPace: 0.01 } } });
  });
  beforeEach(async function () {
    fake.reset();
    hold = new Hold();
    await hold.start();
  });
  afterEach(async function () {
    hold.open();
    await hold.close();
  });
  after(async function () {
    await red?.close();
    await fake?.close();
  });

  /** start -> 'Hello ' (a part) and a slow request -> ' wide' (a part) and 'world.' (the last) -> Stream reply -> seen -> Input. */
  function flows(z: string, envId: string, token: string): FlowNode[] {
    const first = `const part = RED.util.cloneMessage(msg); part.payload = 'Hello '; part.partial = true; return [part, msg];`;
    const last = `const part = RED.util.cloneMessage(msg); part.payload = 'wide '; part.partial = true; node.send(part);
msg.payload = 'world.'; delete msg.partial; return msg;`;
    const seen = `msg.vars.outs = (msg.vars.outs || 0) + 1; msg.vars.answer = msg.payload; msg.vars.stream = msg.stream; return msg;`;
    return [
      tab(z, 'Stream'),
      teamchatEnvironment(envId, token, fake),
      node('teamchat-start', `${z}Start`, z, { environment: envId, variable: 'teamchat' }, [[`${z}First`]]),
      node('function', `${z}First`, z, { func: first, outputs: 2 }, [[`${z}Stream`], [`${z}Wait`]]),
      node('http request', `${z}Wait`, z, { method: 'GET', ret: 'txt', url: `http://127.0.0.1:${hold.port}/slow`, paytoqs: 'ignore' }, [[`${z}Last`]]),
      node('function', `${z}Last`, z, { func: last, outputs: 1 }, [[`${z}Stream`]]),
      node('teamchat-stream', `${z}Stream`, z, {}, [[`${z}Seen`], []]),
      node('function', `${z}Seen`, z, { func: seen, outputs: 1 }, [[`${z}Ask`]]),
      node('input-task', `${z}Ask`, z, { prompt: '', resultVariable: 'answer' }, [[], []]),
    ];
  }

  /** The flows deployed, a question asked, and the answer's first part streaming while its step waits for the rest. */
  async function midAnswer(ending = false): Promise<{ flow: FlowNode[]; envId: string; ts: string }> {
    const z = uid('tab');
    const envId = uid('env');
    const token = `tok${uid('d')}DDDDDDDDDDDDDDDDDDDD`;
    let flow = flows(z, envId, token);
    // The step ends its Session once the slow request answers, the answer still unfinished.
    if (ending) flow = [...flow.map((n) => (n.id === `${z}Wait` ? { ...n, wires: [[`${z}End`]] } : n)), node('end-task', `${z}End`, z, {})];
    await red.deploy(flow);
    const slack = new SlackEvents(red, token, SIGNING_SECRET, fake.team);
    should((await slack.post(slack.envelope(slack.direct('U1', 'hi')))).status).equal(200);
    await eventually(
      () => hold.calls >= 1 && fake.streamText(fake.callsOf('chat.startStream')[0]?.result?.ts ?? '') === 'Hello ',
      15000,
      'the first part streaming',
    );
    return { flow, envId, ts: fake.callsOf('chat.startStream')[0].result!.ts };
  }

  it('a full deploy: the rest is appended to the same message, which is stopped once, and output 1 fires once', async function () {
    const { flow, envId, ts } = await midAnswer();
    await red.deploy(flow);
    hold.open();
    const session = await eventually(
      async () => {
        const list = (await red.admin('GET', `/channel-sessions/sessions?environment=${envId}&ended=true`)).body as any[];
        return list[0]?.state === 'waiting' ? (await red.admin('GET', `/channel-sessions/sessions/${list[0].id}`)).body : undefined;
      },
      20000,
      'the Session to wait after the answer',
    );
    should(fake.callsOf('chat.startStream')).have.length(1);
    should(fake.callsOf('chat.postMessage')).have.length(0);
    should(fake.callsOf('chat.appendStream').map((c) => c.body.ts)).matchEach(ts);
    should(fake.callsOf('chat.stopStream').map((c) => c.body.ts)).eql([ts]);
    should(fake.streamText(ts)).equal('Hello wide world.');
    should(session.vars.outs).equal(1);
    should(session.vars.answer).equal('Hello wide world.');
    should(session.vars.stream).containEql({ ts, messages: 1 });
  });

  it('a deploy that removes the Stream reply: its answer is stopped with what it has, not left streaming', async function () {
    const { flow, ts } = await midAnswer();
    await red.deploy(flow.filter((n) => n.type !== 'teamchat-stream'));
    await eventually(() => fake.callsOf('chat.stopStream').length >= 1, 15000, 'the stream to be stopped');
    should(fake.callsOf('chat.stopStream').map((c) => c.body.ts)).eql([ts]);
    should(fake.streamText(ts)).equal('Hello ');
  });

  it('a Session that ends in the middle of its answer: the stream is stopped with what it has', async function () {
    const { ts } = await midAnswer(true);
    hold.open();
    await eventually(() => fake.callsOf('chat.stopStream').length >= 1, 15000, 'the stream to be stopped');
    should(fake.callsOf('chat.stopStream').map((c) => c.body.ts)).eql([ts]);
    should(fake.callsOf('chat.startStream')).have.length(1);
    should(fake.streamText(ts)).equal('Hello ');
  });
});
