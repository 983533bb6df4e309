import should from 'should';
import { node, tab, uid, type FlowNode } from '../harness/flows';
import { NodeRed, eventually } from '../harness/node-red';
import { FakeSlack } from '../fakes/slack-api';
import { SlackEvents } from '../fakes/slack-events';
import { SlackClicks } from '../fakes/slack-interactions';
import { SIGNING_SECRET, teamchatEnvironment } from '../fakes/slack-flows';
import { FakeTwilioMessagingApi } from '../fakes/twilio-messaging-api';
import { ACCOUNT_SID, AUTH_TOKEN, inboundForm, messagingEnvironment, postInbound, sessionWhen } from '../fakes/twilio-messaging-webhooks';
import { modelInParts } from '../harness/model-parts';

/** A model's answer in parts: `msg.partial` on all but the last, one every `delayMs`. */
const modelFunc = (parts: string[], delayMs: number) => modelInParts(JSON.stringify(parts), delayMs);

/** What output 1 sent on, kept in the Session's variables (how many times, the text, msg.stream). */
const SEEN = `msg.vars.outs = (msg.vars.outs || 0) + 1; msg.vars.answer = msg.payload; msg.vars.stream = msg.stream; msg.vars.partialLeft = msg.partial; return msg;`;

/** Stream reply (Slack): one answer from many parts, streamed into the thread. */
describe('team chat: Stream reply', function () {
  this.timeout(60000);
  let red: NodeRed;
  let fake: FakeSlack;
  let slack: SlackEvents;
  let clicks: SlackClicks;
  let envId: string;

  before(async function () {
    fake = await FakeSlack.start();
    // Appends paced 10 ms apart here (600 ms by default).
    red = await NodeRed.start({ settings: { channelSessions: { streamPace: 0.01 } } });
  });
  after(async function () {
    await red?.close();
    await fake?.close();
  });

  /** start -> model (parts) -> Stream reply -> seen -> Input {rating} (the Session waits) -> Output -> End; errors to an Output and the same Input. */
  async function deploy(parts: string[], delayMs: number, stream: Record<string, unknown> = {}) {
    fake.reset();
    const z = uid('tab');
    envId = uid('env');
    const token = `tok${uid('t')}BBBBBBBBBBBBBBBBBBBB`;
    const flow: FlowNode[] = [
      tab(z, 'Stream'),
      teamchatEnvironment(envId, token, fake),
      node('teamchat-start', uid('s'), z, { environment: envId, variable: 'teamchat' }, [['model']]),
      node('function', 'model', z, { func: modelFunc(parts, delayMs), outputs: 1 }, [['stream']]),
      node('teamchat-stream', 'stream', z, stream, [['seen'], ['failed']]),
      node('function', 'seen', z, { func: SEEN, outputs: 1 }, [['rate']]),
      node('input-task', 'rate', z, { prompt: '', resultVariable: 'rating' }, [['thanks'], []]),
      node('output-task', 'thanks', z, { text: 'Rated {rating}' }, [['end'], []]),
      node('end-task', 'end', z, {}),
      node('output-task', 'failed', z, { text: 'Stream failed: {error.code} {error.message}' }, [['rate'], []]),
    ];
    await red.deploy(flow);
    slack = new SlackEvents(red, token, SIGNING_SECRET, fake.team);
    clicks = new SlackClicks(red, token, SIGNING_SECRET, fake.origin, fake.team);
  }

  async function sessionWaiting(): Promise<any> {
    return eventually(
      async () => {
        const list = (await red.admin('GET', `/channel-sessions/sessions?environment=${envId}&ended=true`)).body as any[];
        return list[0]?.state === 'waiting' ? (await red.admin('GET', `/channel-sessions/sessions/${list[0].id}`)).body : undefined;
      },
      20000,
      'the Session to wait',
    );
  }

  async function ask(text: string): Promise<{ first: Record<string, any>; session: any }> {
    const first = slack.direct('U1', text);
    should((await slack.post(slack.envelope(first))).status).equal(200);
    return { first, session: await sessionWaiting() };
  }

  const parts = ['Rates ', 'are *4.5%* ', 'this week', ', fixed for ', '12 months.'];

  it('streams the parts in order into the thread, with both recipient ids, and goes on once with the whole answer', async function () {
    await deploy(parts, 30);
    const { first, session } = await ask('rates?');
    const starts = fake.callsOf('chat.startStream');
    should(starts.length).equal(1);
    should(starts[0].body).containEql({ channel: first.channel, thread_ts: first.ts, recipient_user_id: 'U1', recipient_team_id: fake.team });
    const ts = starts[0].result!.ts;
    // The parts joined in order are the message's final text, each sent once.
    should(fake.streamText(ts)).equal(parts.join(''));
    should(fake.callsOf('chat.stopStream').map((c) => c.body.ts)).eql([ts]);
    should(fake.callsOf('chat.postMessage')).eql([]);
    // No agent app: Slack refused the session's status once, and the stop carries none.
    should(fake.callsOf('agents.sessions.setStatus').length).equal(1);
    should(fake.callsOf('chat.stopStream')[0].body).not.have.property('session_status');
    should(session.vars.outs).equal(1);
    should(session.vars.answer).equal(parts.join(''));
    should(session.vars.stream).eql({ ts, channel: first.channel, messages: 1, fallback: false, stopped: false });
    should(session.vars.partialLeft).be.undefined();
    // The history records the answer once.
    const bot = session.history.filter((h: any) => h.from === 'bot');
    should(bot.map((h: any) => h.text)).eql([parts.join('')]);
  });

  it("moves an agent app's session: processing while the answer streams, active with its stop", async function () {
    await deploy(parts, 10);
    fake.agents.agentApp = true;
    const { first } = await ask('rates?');
    const set = fake.callsOf('agents.sessions.setStatus');
    should(set.map((c) => c.body)).eql([{ channel_id: first.channel, thread_ts: first.ts, status: 'processing', initiator_user_id: 'U1' }]);
    // Processing (Slack's stop button) before the first word shows.
    should(set[0].at).be.belowOrEqual(fake.callsOf('chat.startStream')[0].at);
    should(fake.callsOf('chat.stopStream')[0].body.session_status).equal('active');
    should(fake.agentSessionOf(first.channel as string, first.ts as string)).eql(['processing', 'active']);
  });

  it('asks an app that is no agent once, and never sends it a session status', async function () {
    await deploy(parts, 10);
    await ask('rates?');
    const thread = slack.direct('U2', 'and now?');
    should((await slack.post(slack.envelope(thread))).status).equal(200);
    await eventually(() => fake.callsOf('chat.stopStream').length === 2 || undefined, 20000, 'the second answer');
    should(fake.callsOf('agents.sessions.setStatus').length).equal(1);
    for (const stop of fake.callsOf('chat.stopStream')) should(stop.body).not.have.property('session_status');
  });

  it('sends no more once the person stops their agent session (agent_session_stopped), and goes on once with stopped: true', async function () {
    await deploy(parts, 10);
    fake.agents.agentApp = true;
    // The first append waits at Slack while the person presses stop.
    const release = fake.hold('chat.appendStream');
    const first = slack.direct('U1', 'rates?');
    should((await slack.post(slack.envelope(first))).status).equal(200);
    await eventually(() => fake.callsOf('chat.appendStream').length === 1 || undefined, 20000, 'the first append');
    const ts = fake.callsOf('chat.startStream')[0].result!.ts as string;
    const stopped = fake.stopAgentSession(first.channel as string, first.ts as string);
    should(stopped).eql([ts]);
    const event = {
      type: 'agent_session_stopped',
      channel: first.channel,
      thread_ts: first.ts,
      user: 'U1',
      event_ts: slack.nextTs(),
      streaming_message_ts: stopped,
    };
    should((await slack.post(slack.envelope(event))).status).equal(200);
    release();
    const session = await sessionWaiting();
    // Nothing after the stop: no new message for the refused part, no stop, no edit.
    should(fake.callsOf('chat.startStream').length).equal(1);
    should(fake.callsOf('chat.appendStream').length).equal(1);
    should(fake.callsOf('chat.stopStream')).eql([]);
    should(fake.callsOf('chat.update')).eql([]);
    should(session.vars.outs).equal(1);
    should(session.vars.stream).eql({ ts, channel: first.channel, messages: 1, fallback: false, stopped: true });
    // Slack leaves the session as it was: it is set to wait for the person again.
    await eventually(() => fake.agentSessionOf(first.channel as string, first.ts as string).includes('active') || undefined, 8000, 'the session active');
    should(fake.agentSessionOf(first.channel as string, first.ts as string)).eql(['processing', 'active']);
  });

  it('warns once when an agent app has not subscribed to agent_session_stopped', async function () {
    await deploy(parts, 10);
    fake.agents.agentApp = true;
    fake.agents.stopSubscribed = false;
    await ask('rates?');
    const warned = () => red.logs.filter((l) => l.includes('subscribe the app to the agent_session_stopped event'));
    await eventually(() => warned().length > 0 || undefined, 8000, 'the warning');
    should(warned().length).equal(1);
  });

  it('posts and edits where Slack has no streaming (feature_not_enabled), the last edit with the whole text', async function () {
    await deploy(parts, 10);
    fake.streaming.enabled = false;
    const { session } = await ask('rates?');
    const posts = fake.callsOf('chat.postMessage');
    should(posts.length).equal(1);
    const ts = posts[0].result!.ts;
    const updates = fake.callsOf('chat.update');
    should(updates.length).be.aboveOrEqual(1);
    should(updates[updates.length - 1].body.text).equal(parts.join(''));
    should(fake.messages.get(ts)!.text).equal(parts.join(''));
    // At most one edit every 2 s.
    for (let i = 1; i < updates.length; i++) should(updates[i].at - updates[i - 1].at).be.aboveOrEqual(1900);
    should(session.vars.stream).containEql({ ts, messages: 1, fallback: true });
  });

  it('goes on in a new posted message where Slack has no streaming and the answer outgrows one, with nothing lost or repeated', async function () {
    const big = Array.from({ length: 20 }, (_, i) => `${String(i).padStart(2, '0')}${'y'.repeat(997)} `);
    await deploy(big, 0);
    fake.streaming.enabled = false;
    const { session } = await ask('everything');
    const posts = fake.callsOf('chat.postMessage').map((c) => c.result!.ts as string);
    should(posts.length).be.aboveOrEqual(3);
    // Each message ends holding its share, under what one message takes; together the whole answer, once.
    for (const ts of posts) should(Buffer.byteLength(fake.messages.get(ts)!.text)).be.belowOrEqual(9000);
    should(posts.map((ts) => fake.messages.get(ts)!.text).join('')).equal(big.join(''));
    // Still at most one edit every 2 s, across the messages.
    const updates = fake.callsOf('chat.update');
    for (let i = 1; i < updates.length; i++) should(updates[i].at - updates[i - 1].at).be.aboveOrEqual(1900);
    should(session.vars.stream).containEql({ ts: posts[posts.length - 1], messages: posts.length, fallback: true });
    should(session.vars.answer).equal(big.join(''));
  });

  it('goes on in a new message when Slack seals the stream, with nothing lost or repeated', async function () {
    const many = Array.from({ length: 12 }, (_, i) => `part ${i}. `);
    await deploy(many, 20);
    fake.streaming.sealAfterAppends = 3;
    const { session } = await ask('long one');
    const starts = fake.callsOf('chat.startStream').map((c) => c.result!.ts as string);
    should(starts.length).be.aboveOrEqual(2);
    should(starts.map((ts) => fake.streamText(ts)).join('')).equal(many.join(''));
    // A sealed message is settled with chat.update and the text it holds.
    const sealed = starts.filter((ts) => fake.streams.get(ts)!.sealed);
    should(sealed.length).be.aboveOrEqual(1);
    for (const ts of sealed) should(fake.streams.get(ts)!.updated).equal(fake.streamText(ts));
    should(session.vars.answer).equal(many.join(''));
    should(session.vars.stream.messages).equal(starts.length);
  });

  it('splits a 20,000-character answer into messages under the cap', async function () {
    const big = Array.from({ length: 20 }, (_, i) => `${String(i).padStart(2, '0')}${'x'.repeat(997)} `);
    should(big.join('').length).equal(20000);
    await deploy(big, 0);
    fake.streaming.maxChars = 12000;
    const { session } = await ask('everything');
    const starts = fake.callsOf('chat.startStream').map((c) => c.result!.ts as string);
    should(starts.length).be.aboveOrEqual(2);
    for (const ts of starts) should(fake.streamText(ts).length).be.belowOrEqual(12000);
    should(starts.map((ts) => fake.streamText(ts)).join('')).equal(big.join(''));
    should(fake.calls.filter((c) => c.result?.error === 'msg_too_long')).eql([]);
    should(session.vars.stream.messages).equal(starts.length);
  });

  it('keeps the stream through a 429 on an append and sends the part again after Retry-After', async function () {
    await deploy(parts, 30);
    fake.inject('chat.appendStream', { status: 429, retryAfter: '1' });
    const { session } = await ask('rates?');
    should(fake.attemptsOf('chat.appendStream').filter((a) => a.fault).length).equal(1);
    const starts = fake.callsOf('chat.startStream');
    should(starts.length).equal(1);
    should(fake.streamText(starts[0].result!.ts)).equal(parts.join(''));
    should(session.vars.stream.messages).equal(1);
  });

  it("takes the error branch once with Slack's refusal of a part, and stops the stream it left open", async function () {
    await deploy(parts, 20);
    fake.failures.set('chat.appendStream', 'invalid_chunks');
    const { session } = await ask('rates?');
    const ts = fake.callsOf('chat.startStream')[0].result!.ts as string;
    should(fake.callsOf('chat.postMessage').map((c) => c.body.text)).eql(['Stream failed: 4001 Stream reply: Slack answered invalid_chunks']);
    // One refused append: the parts after it are not sent, and the stream is stopped with what it holds.
    should(fake.callsOf('chat.appendStream').length).equal(1);
    should(fake.streams.get(ts)!.open).be.false();
    should(fake.callsOf('chat.stopStream').map((c) => c.body.ts)).eql([ts]);
    should(session.vars.outs).be.undefined();
  });

  it('sends no more once the person stopped the answer (stopped_by_user), and goes on once with stopped: true', async function () {
    await deploy(parts, 20);
    fake.failures.set('chat.appendStream', 'stopped_by_user');
    const { session } = await ask('rates?');
    const ts = fake.callsOf('chat.startStream')[0].result!.ts as string;
    should(fake.callsOf('chat.appendStream').length).equal(1);
    should(fake.callsOf('chat.stopStream')).eql([]);
    should(fake.callsOf('chat.update')).eql([]);
    should(session.vars.outs).equal(1);
    should(session.vars.stream).eql({ ts, channel: fake.streams.get(ts)!.channel, messages: 1, fallback: false, stopped: true });
  });

  it('puts the feedback buttons under the finished answer, and a click answers the waiting InputTask', async function () {
    await deploy(parts, 10, { feedback: true });
    const { first } = await ask('rates?');
    const stop = fake.callsOf('chat.stopStream')[0];
    const block = stop.body.blocks[0];
    should(block.type).equal('context_actions');
    should(block.elements[0].type).equal('feedback_buttons');
    should(block.elements[0].positive_button.value).equal('positive');
    should(block.elements[0].negative_button.value).equal('negative');
    const at = { user: 'U1', channel: first.channel, messageTs: stop.body.ts, threadTs: first.ts };
    const res = await clicks.post(clicks.button(at, { action_id: block.elements[0].action_id, block_id: 'fb', text: 'Good answer', value: 'positive' }));
    should(res.status).equal(200);
    await eventually(() => fake.callsOf('chat.postMessage').find((c) => c.body.text === 'Rated positive'), 8000, 'the rating to be posted');
  });
});

/** The same Process on SMS: the parts are gathered and sent as one message, as an OutputTask would. */
describe('team chat: Stream reply on SMS', function () {
  this.timeout(30000);
  let red: NodeRed;
  let fake: FakeTwilioMessagingApi;
  let slackFake: FakeSlack;

  before(async function () {
    fake = await FakeTwilioMessagingApi.start(ACCOUNT_SID, AUTH_TOKEN);
    slackFake = await FakeSlack.start();
    red = await NodeRed.start();
  });
  after(async function () {
    await red?.close();
    await fake?.close();
    await slackFake?.close();
  });

  it('sends the whole answer once, and goes on once with it', async function () {
    const z = uid('tab');
    const token = 'tok-sms-' + uid();
    const parts = ['Rates ', 'are 4.5% ', 'this week.'];
    await red.deploy([
      tab(z, 'Stream on SMS'),
      messagingEnvironment('envSms', token, fake, red),
      teamchatEnvironment('envSlack', `tok${uid('t')}BBBBBBBBBBBBBBBBBBBB`, slackFake),
      node('teamchat-start', uid('s'), z, { environment: 'envSlack', variable: 'teamchat' }, [['model']]),
      node('telco-sms-start', uid('s'), z, { environment: 'envSms', variable: 'message' }, [['model']]),
      node('function', 'model', z, { func: modelFunc(parts, 20), outputs: 1 }, [['stream']]),
      node('teamchat-stream', 'stream', z, { feedback: true }, [['seen'], []]),
      node('function', 'seen', z, { func: SEEN, outputs: 1 }, [['rate']]),
      node('input-task', 'rate', z, { prompt: '', resultVariable: 'rating' }, [[], []]),
    ]);
    const user = '+15551230001';
    const ours = '+15550001000';
    should((await postInbound(red, token, inboundForm(user, ours, 'rates?'))).status).equal(200);
    const session = await sessionWhen(red, 'envSms', user, ours, (s) => s.waitingAt?.nodeId === 'rate', 'the SMS Session to wait at rate');
    should(fake.messagesTo(user).map((m) => m.Body)).eql([parts.join('')]);
    should(session.vars.outs).equal(1);
    should(session.vars.stream).eql({ ts: '', channel: '', messages: 1, fallback: false, stopped: false });
    should(session.history.filter((h: any) => h.from === 'bot').map((h: any) => h.text)).eql([parts.join('')]);
    should(slackFake.calls).eql([]);
  });
});

/** The pace of the appends: one per app and workspace, whichever Environment streams. */
describe('team chat: Stream reply paced per app and workspace', function () {
  this.timeout(60000);
  const PACE_MS = 250;
  let red: NodeRed;
  let fake: FakeSlack;

  before(async function () {
    fake = await FakeSlack.start();
    red = await NodeRed.start({ settings: { channelSessions: { streamPace: PACE_MS / 1000 } } });
  });
  after(async function () {
    await red?.close();
    await fake?.close();
  });

  /** Environments of one Slack app in one workspace (the fake's), each with a start -> model -> Stream reply -> Input. */
  async function deploy(envIds: string[], func: string): Promise<SlackEvents[]> {
    fake.reset();
    // An app of its own for each test (its own pace): one test's appends do not pace the next's.
    fake.botId = uid('B');
    const z = uid('tab');
    const flow: FlowNode[] = [tab(z, 'Paced')];
    const events: SlackEvents[] = [];
    for (const envId of envIds) {
      const token = `tok${uid('t')}BBBBBBBBBBBBBBBBBBBB`;
      const model = uid('m');
      const stream = uid('st');
      const rate = uid('r');
      flow.push(
        teamchatEnvironment(envId, token, fake),
        node('teamchat-start', uid('s'), z, { environment: envId, variable: 'teamchat' }, [[model]]),
        node('function', model, z, { func, outputs: 1 }, [[stream]]),
        node('teamchat-stream', stream, z, {}, [[rate], []]),
        node('input-task', rate, z, { prompt: '', resultVariable: 'rating' }, [[], []]),
      );
      events.push(new SlackEvents(red, token, SIGNING_SECRET, fake.team));
    }
    await red.deploy(flow);
    return events;
  }

  it('spaces the appends of two Environments of the same app in one workspace as one', async function () {
    const parts = Array.from({ length: 8 }, (_, i) => `part ${i}. `);
    const [one, two] = await deploy([uid('env'), uid('env')], modelFunc(parts, 60));
    // Both answers stream at once, one through each Environment.
    const asked = await Promise.all(
      [one, two].map((events, i) => events.post(events.envelope(events.direct(`U${i + 1}`, 'go', { channel: `D0DIRECT${i + 1}` })))),
    );
    should(asked.map((r) => r.status)).eql([200, 200]);
    await eventually(() => fake.callsOf('chat.stopStream').length === 2 || undefined, 30000, 'both answers');
    const starts = fake.callsOf('chat.startStream').map((c) => c.result!.ts as string);
    should(starts.length).equal(2);
    for (const ts of starts) should(fake.streamText(ts)).equal(parts.join(''));
    const appends = fake.callsOf('chat.appendStream');
    should(new Set(appends.map((a) => a.body.ts)).size).equal(2);
    // One budget: no two appends closer than the pace (less what the loopback may take), whichever answer made them.
    for (let i = 1; i < appends.length; i++) should(appends[i].at - appends[i - 1].at).be.aboveOrEqual(PACE_MS - 50);
  });

  it("ends the answer with its stop, not behind the other answers' appends", async function () {
    // A first part, then a second and the last together.
    const func = `const send = (p, partial) => { const m = RED.util.cloneMessage(msg); m.payload = p; m.partial = partial; node.send(m); };
send('One, ', true);
setTimeout(() => { send('two, ', true); send('three.', false); node.done(); }, 300);
return null;`;
    const [events] = await deploy([uid('env')], func);
    should((await events.post(events.envelope(events.direct('U1', 'go')))).status).equal(200);
    await eventually(() => fake.callsOf('chat.stopStream').length === 1 || undefined, 30000, 'the answer');
    const ts = fake.callsOf('chat.startStream')[0].result!.ts as string;
    should(fake.streamText(ts)).equal('One, two, three.');
    // The last part is never appended: it goes with the stop (with the second, if it had not gone yet).
    should(fake.callsOf('chat.appendStream').map((c) => c.body.markdown_text)).not.containEql('three.');
    should(fake.callsOf('chat.stopStream')[0].body.markdown_text).endWith('three.');
  });

  it('gives the stop the part whose append still waited for its turn when the last part came', async function () {
    // Two parts far enough apart for an append each, then the last right behind the second.
    const func = `const send = (p, partial) => { const m = RED.util.cloneMessage(msg); m.payload = p; m.partial = partial; node.send(m); };
send('One, ', true);
setTimeout(() => send('two, ', true), 100);
setTimeout(() => { send('three, ', true); send('four.', false); node.done(); }, 150);
return null;`;
    const [events] = await deploy([uid('env')], func);
    should((await events.post(events.envelope(events.direct('U1', 'go')))).status).equal(200);
    await eventually(() => fake.callsOf('chat.stopStream').length === 1 || undefined, 30000, 'the answer');
    const ts = fake.callsOf('chat.startStream')[0].result!.ts as string;
    should(fake.streamText(ts)).equal('One, two, three, four.');
    should(fake.callsOf('chat.appendStream').map((c) => c.body.markdown_text)).eql(['two, ']);
    should(fake.callsOf('chat.stopStream')[0].body.markdown_text).equal('three, four.');
  });

  it('sends the parts that came while an append waited for its turn in one append', async function () {
    const parts = Array.from({ length: 12 }, (_, i) => `word${i} `);
    // The whole answer at once: every part is there before the first append's turn.
    const burst = `const parts = ${JSON.stringify(parts)};
parts.forEach((p, i) => { const m = RED.util.cloneMessage(msg); m.payload = p; m.partial = i < parts.length - 1; node.send(m); });
return null;`;
    const [events] = await deploy([uid('env')], burst);
    should((await events.post(events.envelope(events.direct('U1', 'go')))).status).equal(200);
    await eventually(() => fake.callsOf('chat.stopStream').length === 1 || undefined, 30000, 'the answer');
    const ts = fake.callsOf('chat.startStream')[0].result!.ts as string;
    should(fake.streamText(ts)).equal(parts.join(''));
    should(fake.callsOf('chat.appendStream').length).be.belowOrEqual(2);
  });
});

/** A crash (kill -9) while an answer streams: the step runs again after the restart. */
describe('team chat: Stream reply across a crash', function () {
  this.timeout(90000);
  let red: NodeRed;
  let fake: FakeSlack;

  before(async function () {
    fake = await FakeSlack.start();
    red = await NodeRed.start({ settings: { channelSessions: { streamPace: 0.01 } } });
  });
  after(async function () {
    await red?.close();
    await fake?.close();
  });

  it('finishes the message the crash left streaming with the whole answer, and streams nothing twice', async function () {
    const parts = Array.from({ length: 10 }, (_, i) => `part ${i}. `);
    const z = uid('tab');
    const envId = uid('env');
    const token = `tok${uid('t')}BBBBBBBBBBBBBBBBBBBB`;
    await red.deploy([
      tab(z, 'Crash'),
      teamchatEnvironment(envId, token, fake),
      node('teamchat-start', uid('s'), z, { environment: envId, variable: 'teamchat' }, [['model']]),
      node('function', 'model', z, { func: modelFunc(parts, 300), outputs: 1 }, [['stream']]),
      node('teamchat-stream', 'stream', z, { feedback: true }, [['seen'], []]),
      node('function', 'seen', z, { func: SEEN, outputs: 1 }, [['rate']]),
      node('input-task', 'rate', z, { prompt: '', resultVariable: 'rating' }, [[], []]),
    ]);
    const slack = new SlackEvents(red, token, SIGNING_SECRET, fake.team);
    const first = slack.direct('U1', 'rates?');
    should((await slack.post(slack.envelope(first))).status).equal(200);
    // Killed in the middle of the answer: the stream has its first parts, and is never stopped.
    await eventually(() => fake.callsOf('chat.appendStream').length >= 2 || undefined, 20000, 'two appends');
    await red.kill();
    const ts = fake.callsOf('chat.startStream')[0].result!.ts as string;
    should(fake.streams.get(ts)!.open).be.true();
    should(fake.streamText(ts).length).be.below(parts.join('').length);

    await red.relaunch();
    const session = await eventually(
      async () => {
        const list = (await red.admin('GET', `/channel-sessions/sessions?environment=${envId}`)).body as any[];
        return list[0]?.state === 'waiting' ? (await red.admin('GET', `/channel-sessions/sessions/${list[0].id}`)).body : undefined;
      },
      30000,
      'the Session to wait after the restart',
    );
    // One streamed message, never a second: the re-run settled the first with the whole answer.
    should(fake.callsOf('chat.startStream').length).equal(1);
    should(fake.callsOf('chat.postMessage')).eql([]);
    should(fake.streams.get(ts)!.open).be.false();
    should(fake.streams.get(ts)!.updated).equal(parts.join(''));
    const edit = fake.callsOf('chat.update').filter((c) => c.body.ts === ts);
    should(edit.length).equal(1);
    should(edit[0].body.blocks[1].type).equal('context_actions');
    should(session.vars.answer).equal(parts.join(''));
    should(session.vars.stream).containEql({ ts, messages: 1 });
    should(session.history.filter((h: any) => h.from === 'bot').map((h: any) => h.text)).eql([parts.join('')]);
  });
});
