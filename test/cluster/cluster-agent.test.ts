import should from 'should';
import { node, tab } from '../harness/flows';
import { NodeRed } from '../harness/node-red';
import { RedisServer, redisContextSettings } from '../harness/redis';
import { FakeTwilioCall } from '../fakes/twilio-voice-caller';
import { FakeConversationRelay } from '../fakes/conversation-relay';
import { sessionOfCall, voiceEnvironment } from '../harness/voice-flows';

/** An AI agent call on two instances sharing Redis: the relay on the instance that took it, the return on either. */
describe('an AI agent call on two instances sharing Redis', function () {
  this.timeout(60000);
  let redis: RedisServer;
  const reds: NodeRed[] = [];
  const PUBLIC = 'https://ivr.example.com';
  const env = voiceEnvironment('vagentshared', { sessionStore: 'shared', publicBaseUrl: PUBLIC });

  before(async function () {
    redis = await RedisServer.start();
    const flows = [
      env,
      tab('pa', 'Agent'),
      node('telco-call-start', 'as', 'pa', { environment: 'vagentshared' }, [['ag']]),
      node('telco-voice-agent', 'ag', 'pa', { resultVariable: 'agent' }, [['after'], [], ['say', 'turnlog']]),
      node('function', 'turnlog', 'pa', { func: "node.warn('turn: ' + msg.payload); return null;", outputs: 1 }, [[]]),
      node('telco-voice-agent-say', 'say', 'pa', {}, [[], []]),
      node('output-task', 'after', 'pa', { text: 'Back with {agent.handoffData.next}.' }, [['end'], []]),
      node('end-task', 'end', 'pa', {}),
    ];
    for (let i = 0; i < 2; i++) {
      const red = await NodeRed.start({ settings: { channelSessions: { sweepInterval: 0.2 } }, settingsCode: redisContextSettings(redis.url) });
      reds.push(red);
      await red.deploy(flows);
    }
  });
  after(async function () {
    for (const red of reds) await red.close();
    await redis?.close();
  });

  it('serves the relay where it connects (either instance finds the waiting Session) and resumes on the other instance', async function () {
    const [a, b] = reds;
    const call = new FakeTwilioCall(a, { publicBaseUrl: PUBLIC });
    const answer = await call.start(env.token);
    should(answer.status).equal(200, answer.text);
    const connect = answer.verbs[0];
    const url = connect.children[0].attrs.url;
    should(url.startsWith(`wss://ivr.example.com/api/TelcoModule/Voice/relay/vagentshared?call=${call.callSid}&relay=`)).be.true(url);

    // The load balancer may send the upgrade to the other instance: it finds the Session in Redis.
    const onB = await FakeConversationRelay.connect(b.url(''), url);
    onB.prompt('on b');
    should((await onB.frames(1))[0]).eql({ type: 'text', token: 'on b', last: true });
    onB.ws.terminate();
    await onB.closed;

    const onA = await FakeConversationRelay.connect(a.url(''), url);
    onA.prompt('on a');
    should((await onA.frames(1))[0].token).equal('on a');
    await onA.close();

    // Twilio posts the return to whichever instance; B resumes the Session A accepted.
    const onOther = new FakeTwilioCall(b, { publicBaseUrl: PUBLIC });
    Object.defineProperty(onOther, 'callSid', { value: call.callSid });
    const back = await onOther.follow(connect.attrs.action, {
      SessionId: 'VX' + '2'.repeat(32),
      SessionStatus: 'ended',
      HandoffData: JSON.stringify({ next: 'billing' }),
    });
    should(back.verbs.map((v) => [v.verb, v.text])).eql([
      ['Say', 'Back with billing.'],
      ['Hangup', ''],
    ]);
    const session = await sessionOfCall(b, call.callSid);
    should(session.state).equal('completed');
    should(session.vars.agent.handoffData).eql({ next: 'billing' });
  });

  it("closes the relay on one instance when its Session is ended through the other: the caller's next turn reaches no flow", async function () {
    const [a, b] = reds;
    const mark = a.logs.length;
    const call = new FakeTwilioCall(a, { publicBaseUrl: PUBLIC });
    const answer = await call.start(env.token);
    const relay = await FakeConversationRelay.connect(a.url(''), answer.verbs[0].children[0].attrs.url);
    relay.prompt('before the end');
    should((await relay.frames(1))[0].token).equal('before the end');

    // The End button of the editor on B: B's step ends the Session in Redis; A holds the socket.
    const session = await sessionOfCall(b, call.callSid);
    should((await b.admin('DELETE', `/channel-sessions/sessions/${session.id}`)).status).equal(200);
    relay.prompt('after the end');
    const closed = await Promise.race([relay.closed, new Promise((r) => setTimeout(() => r('still open after 5 s'), 5000))]);
    should(closed).eql({ code: 1000, reason: 'the Session ended' });
    should(relay.received.map((f) => f.token)).eql(['before the end']);
    should(a.logs.slice(mark).filter((l) => /turn: after the end/.test(l))).eql([]);
  });
});
