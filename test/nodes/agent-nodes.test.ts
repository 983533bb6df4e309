import should from 'should';
import { node, tab } from '../harness/flows';
import { eventually } from '../harness/node-red';
import { helper, load, messagesOf, nextMessage, reply, sessionDetail, startTestSession, statusesOf } from '../harness/helper';

/**
 * The AI agent and Agent say in-process, in the Test chat: typed lines are turns, no call and no
 * provider. Output 3 goes straight to Agent say (an echo); the tests send Agent say more themselves.
 */
describe('AI agent and Agent say nodes (node-red-node-test-helper)', function () {
  const credentials = {
    envA: { accountSid: 'AC00000000000000000000000000000001', authToken: 'voice-auth-token', webhookSigningSecret: '', token: 'agentNodeToken0123456789' },
  };
  const flow = (agent: Record<string, unknown> = {}) => [
    tab('t1'),
    { id: 'envA', type: 'telco-voice-environment', name: 'Agent line' },
    node('telco-call-start', 'c1', 't1', { environment: 'envA', variable: 'call', testData: { from: '+14155550123' } }, [['ag']]),
    node('telco-voice-agent', 'ag', 't1', { welcomeGreeting: 'Hi {call.from}!', resultVariable: 'bot', ...agent }, [['h1'], ['h2'], ['h3', 'say']]),
    node('telco-voice-agent-say', 'say', 't1', {}, [['h4'], ['h5']]),
    node('helper', 'h1', 't1'),
    node('helper', 'h2', 't1'),
    node('helper', 'h3', 't1'),
    node('helper', 'h4', 't1'),
    node('helper', 'h5', 't1'),
  ];
  const transcript = async (id: string) => (await sessionDetail(id)).transcript.map((l: any) => l.text);

  afterEach(async function () {
    await helper.unload();
  });

  describe('telco-voice-agent', function () {
    it('waits in the Test chat, shows the greeting, and sends each typed line out of output 3 as a turn', async function () {
      await load(flow(), credentials);
      const session = await startTestSession('c1');
      should(session.state).equal('waiting');
      should(session.waitingAt.nodeId).equal('ag');
      should(await transcript(session.id)).eql(['Hi +14155550123!']);
      const after = await reply(session.id, 'hello');
      should(after.state).equal('waiting');
      const turn = await nextMessage('h3');
      should(turn.payload).equal('hello');
      should(turn.agent).have.properties({ type: 'prompt' });
      should(turn.agent.relayId).be.a.String();
      should(turn.session).have.properties({ id: session.id, channel: 'Chat', isTest: true });
      should(turn.vars.call.from).equal('+14155550123');
      // Agent say's answer is shown in the chat; the Session still waits at the agent.
      await eventually(async () => (await transcript(session.id)).length === 3, 3000, 'the answer in the transcript');
      should(await transcript(session.id)).eql(['Hi +14155550123!', 'hello', 'hello']);
      should((await sessionDetail(session.id)).waitingAt.nodeId).equal('ag');
    });

    it('takes typed lines as turns in a Test chat that plays the call (mode channel), as on the Chat Channel', async function () {
      await load(flow(), credentials);
      const session = await startTestSession('c1', undefined, 'channel');
      should(session.channel).equal('TelcoVoice');
      should(session.waitingAt.nodeId).equal('ag');
      const after = await reply(session.id, 'hello');
      should(after.state).equal('waiting');
      const turn = await nextMessage('h3');
      should(turn.payload).equal('hello');
      should(turn.session).have.properties({ id: session.id, channel: 'TelcoVoice', isTest: true });
      should((await sessionDetail(session.id)).waitingAt.nodeId).equal('ag');
      should(messagesOf('h1')).eql([]);
    });

    it('joins streamed tokens into one line, shows play and digits, and goes on at output 1 with the hand-off data on msg.end', async function () {
      await load(flow(), credentials);
      const session = await startTestSession('c1');
      await reply(session.id, 'tell me');
      const turn = await nextMessage('h3');
      const say = helper.getNode('say');
      say.receive({ agent: turn.agent, payload: 'Hel', partial: true });
      say.receive({ agent: turn.agent, payload: 'lo there' });
      say.receive({ agent: turn.agent, play: 'https://cdn.example.com/hold.mp3', digits: '12#' });
      await eventually(async () => (await transcript(session.id)).includes('[digits] 12#'), 3000, 'the digits note');
      should(await transcript(session.id)).eql(['Hi +14155550123!', 'tell me', 'tell me', 'Hello there', '[audio] https://cdn.example.com/hold.mp3', '[digits] 12#']);
      say.receive({ agent: turn.agent, end: true, payload: { transfer: true, topic: turn.vars.call.from } });
      const done = await nextMessage('h1');
      should(done.session.id).equal(session.id);
      should(done.vars.bot).eql({
        handoffData: { transfer: true, topic: '+14155550123' },
        status: 'completed',
        duration: null,
        errorCode: '',
        errorMessage: '',
        reconnects: 0,
      });
    });

    it("lets its stand-in relay go when the test Session ends: Agent say on it then takes output 2 with 4012", async function () {
      await load(flow(), credentials);
      for (const mode of ['chat', 'channel'] as const) {
        const session = await startTestSession('c1', undefined, mode);
        await reply(session.id, 'hi');
        const turn = await nextMessage('h3');
        should((await helper.request().delete(`/channel-sessions/sessions/${session.id}`)).status).equal(200);
        helper.getNode('say').receive({ agent: turn.agent, payload: 'still there?' });
        const gone = await nextMessage('h5');
        should(gone.error.code).equal(4012);
        should(gone.error.message).match(new RegExp(`${turn.agent.relayId} is gone`));
      }
    });

    it('takes its error branch with 4012 in the Test chat when an external agent server is set', async function () {
      await load(flow({ url: 'wss://agent.example.com/ws' }), credentials);
      await startTestSession('c1');
      const msg = await nextMessage('h2');
      should(msg.error).have.properties({ code: 4012 });
      should(msg.error.message).match(/external agent server/);
      should(statusesOf('ag').pop()).eql({ fill: 'red', shape: 'dot', text: '4012 ModuleInvalidData' });
    });
  });

  describe('telco-voice-agent-say', function () {
    it('takes output 2 with 4012 for a relay that is gone, and 3005 when there is nothing to send; it never throws', async function () {
      await load(flow(), credentials);
      helper.getNode('say').receive({ payload: 'anyone there?', agent: { relayId: 'gone-relay', type: 'prompt', lang: 'en-US' } });
      const gone = await nextMessage('h5');
      should(gone.error.code).equal(4012);
      should(gone.error.message).match(/gone-relay is gone/);
      helper.getNode('say').receive({ payload: 'no agent at all' });
      should((await nextMessage('h5')).error.code).equal(4012);
      const session = await startTestSession('c1');
      await reply(session.id, 'hi');
      const turn = await nextMessage('h3');
      helper.getNode('say').receive({ agent: turn.agent });
      const nothing = await nextMessage('h5');
      should(nothing.error).have.properties({ code: 3005, message: 'Nothing to send: set msg.payload (text), msg.relay, msg.play, msg.digits or msg.end' });
      helper.getNode('say').receive({ agent: turn.agent, payload: { an: 'object' } });
      should((await nextMessage('h5')).error.code).equal(3005);
      helper.getNode('say').receive({ agent: turn.agent, play: 'ftp://x' });
      should((await nextMessage('h5')).error.code).equal(3005);
      // msg.relay is a message of the relay (an object with a type), msg.lang a language.
      const cyclic: Record<string, unknown> = { type: 'config' };
      cyclic.self = cyclic;
      for (const bad of [{ relay: 'language' }, { relay: ['language'] }, { relay: { ttsLanguage: 'fr-FR' } }, { relay: { type: 7 } }, { relay: cyclic }, { payload: 'Bonjour', lang: 5 }]) {
        helper.getNode('say').receive({ agent: turn.agent, ...bad });
        const refused = await nextMessage('h5');
        should(refused.error.code).equal(3005, JSON.stringify(Object.keys(bad)));
        should(refused.error.message).match(/^msg\.(relay|lang) /);
      }
    });

    it('shows a frame sent with msg.relay in the Test chat as a line of what was sent, then the text', async function () {
      await load(flow(), credentials);
      const session = await startTestSession('c1');
      await reply(session.id, 'in French');
      const turn = await nextMessage('h3');
      await eventually(async () => (await transcript(session.id)).length === 3, 3000, 'the echo');
      const frame = { type: 'language', ttsLanguage: 'fr-FR', transcriptionLanguage: 'fr-FR' };
      helper.getNode('say').receive({ agent: turn.agent, relay: frame, payload: 'Bonjour', lang: 'fr-FR' });
      await eventually(async () => (await transcript(session.id)).length === 5, 3000, 'the frame and the text');
      const lines = (await sessionDetail(session.id)).transcript.slice(3);
      should(lines.map((l: any) => [l.from, l.kind, l.text])).eql([
        ['bot', 'relay', JSON.stringify(frame)],
        ['bot', 'message', 'Bonjour'],
      ]);
      should(lines[0].detail).eql(frame);
    });

    it('refuses an attribute that shadows a property of the Task on its error branch with 3005, in the Test chat too', async function () {
      await load(flow({ attributes: [{ name: 'hints', value: 'a, b' }, { name: 'DtmfDetection', value: 'false' }] }), credentials);
      await startTestSession('c1');
      const msg = await nextMessage('h2');
      should(msg.error).have.properties({ code: 3005 });
      should(msg.error.message).equal('The ConversationRelay attribute "DtmfDetection" is set by the AI agent\'s own property (dtmfDetection): set it there, not in More attributes');
      for (const [attributes, problem] of [
        [[{ name: 'two words', value: '' }], /may hold only letters and digits/],
        [[{ name: 'hints', value: 'a' }, { name: 'HINTS', value: 'b' }], /is in More attributes twice/],
      ] as const) {
        await helper.unload();
        await load(flow({ attributes }), credentials);
        await startTestSession('c1');
        should((await nextMessage('h2')).error.message).match(problem);
      }
    });
  });
});
