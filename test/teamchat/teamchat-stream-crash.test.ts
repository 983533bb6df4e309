import should from 'should';
import { node, tab, uid } from '../harness/flows';
import { Hold } from '../harness/hold';
import { NodeRed, eventually } from '../harness/node-red';
import { FakeSlack } from '../fakes/slack-api';
import { SlackEvents } from '../fakes/slack-events';
import { SIGNING_SECRET, teamchatEnvironment } from '../fakes/slack-flows';

/**
 * Stream reply after a crash (SIGKILL): the answer's stream was started and its first part is in
 * Slack when the process dies, its step waiting on a slow request for the rest. The step runs again
 * after the restart: the stream it started (its ts) comes back from its journal, so the answer goes
 * on in that same message instead of a second one beginning with the same words.
 */
describe('team chat: a Stream reply cut by kill -9 goes on in the message it started', function () {
  this.timeout(120000);
  let fake: FakeSlack;
  let hold: Hold;
  let red: NodeRed;

  beforeEach(async function () {
    fake = await FakeSlack.start();
    hold = new Hold();
    await hold.start();
    red = await NodeRed.start({ settings: { channelSessions: { streamPace: 0.01 } } });
  });
  afterEach(async function () {
    await red?.close();
    await hold?.close();
    await fake?.close();
  });

  it('one stream, its first part once, the rest appended after the restart', async function () {
    const z = uid('tab');
    const envId = uid('env');
    const token = `tok${uid('y')}CCCCCCCCCCCCCCCCCCCC`;
    const first = `const part = RED.util.cloneMessage(msg); part.payload = 'Hello '; part.partial = true; return [part, msg];`;
    const last = `msg.payload = 'world.'; delete msg.partial; return msg;`;
    await red.deploy([
      tab(z, 'Stream'),
      teamchatEnvironment(envId, token, fake),
      node('teamchat-start', 'scStart', z, { environment: envId, variable: 'teamchat' }, [['scFirst']]),
      node('function', 'scFirst', z, { func: first, outputs: 2 }, [['scStream'], ['scWait']]),
      node('http request', 'scWait', z, { method: 'GET', ret: 'txt', url: `http://127.0.0.1:${hold.port}/slow`, paytoqs: 'ignore' }, [['scLast']]),
      node('function', 'scLast', z, { func: last, outputs: 1 }, [['scStream']]),
      node('teamchat-stream', 'scStream', z, {}, [['scAsk'], []]),
      node('input-task', 'scAsk', z, { prompt: '', resultVariable: 'answer' }, [[], []]),
    ]);
    const slack = new SlackEvents(red, token, SIGNING_SECRET, fake.team);
    should((await slack.post(slack.envelope(slack.direct('U1', 'hi')))).status).equal(200);
    await eventually(() => hold.calls >= 1 && fake.callsOf('chat.startStream').length === 1, 15000, 'the stream started and the step waiting for the rest');
    await red.kill();
    hold.open();
    await red.relaunch();
    await eventually(() => fake.callsOf('chat.stopStream').length >= 1, 20000, 'the answer to be finished after the restart');
    await new Promise((r) => setTimeout(r, 500));
    should(fake.callsOf('chat.startStream')).have.length(1);
    should(fake.callsOf('chat.postMessage')).have.length(0);
    const [ts] = [...fake.streams.keys()];
    // What the person reads in that message: the rest streamed in, or (as Stream reply settles a
    // stream it finds from an earlier run) the whole answer by an edit; the first part once.
    const stream = fake.streams.get(ts)!;
    should(stream.updated ?? stream.parts.join('')).equal('Hello world.');
    should(stream.parts.join(''))
      .startWith('Hello ')
      .and.not.match(/Hello .*Hello/);
  });

  it("a stream's start in flight at the crash: Slack cannot be asked for it, so it starts again with one warning that it may be a duplicate", async function () {
    const z = uid('tab');
    const envId = uid('env');
    const token = `tok${uid('y')}DDDDDDDDDDDDDDDDDDDD`;
    await red.deploy([
      tab(z, 'Stream'),
      teamchatEnvironment(envId, token, fake),
      node('teamchat-start', 'sdStart', z, { environment: envId, variable: 'teamchat' }, [['sdAnswer']]),
      node('function', 'sdAnswer', z, { func: `msg.payload = 'Hello world.'; return msg;`, outputs: 1 }, [['sdStream']]),
      node('teamchat-stream', 'sdStream', z, {}, [['sdAsk'], []]),
      node('input-task', 'sdAsk', z, { prompt: '', resultVariable: 'answer' }, [[], []]),
    ]);
    // Slack starts the stream and never answers: the step dies not knowing its ts.
    fake.inject('chat.startStream', { madeThenHeld: true });
    const slack = new SlackEvents(red, token, SIGNING_SECRET, fake.team);
    should((await slack.post(slack.envelope(slack.direct('U1', 'hi')))).status).equal(200);
    await eventually(() => fake.callsOf('chat.startStream').length === 1, 15000, 'the stream started and held');
    await red.kill();
    await red.relaunch();
    await eventually(() => fake.callsOf('chat.stopStream').length >= 1, 20000, 'the answer to be finished after the restart');
    should(fake.callsOf('chat.startStream')).have.length(2);
    const warned = red.logs.filter((l) => /may be a duplicate/.test(l));
    should(warned).have.length(1, warned.join('\n'));
    should(warned[0]).match(/stream's start/);
    should(warned[0]).not.containEql(token);
  });
});
