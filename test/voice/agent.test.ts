import { request } from 'node:http';
import should from 'should';
import { NodeRed, eventually } from '../harness/node-red';
import { node, tab, type FlowNode } from '../harness/flows';
import { FakeTwilioCall, type CallAnswer, type ParsedVerb } from '../fakes/twilio-voice-caller';
import { FakeConversationRelay, RawRelaySocket } from '../fakes/conversation-relay';
import { logsSince, sessionOfCall, voiceEnvironment } from '../harness/voice-flows';

/**
 * The stand-in for a model: answers each turn at once, and a few words on purpose: `stream` in
 * three tokens, `slow` and `late` after a while, `bye` ends the relay asking for a person.
 */
const MODEL = `
const a = msg.agent;
if (a.type === 'interrupt') { node.warn('interrupt: ' + msg.payload); return null; }
if (a.type === 'dtmf') { msg.payload = 'You pressed ' + msg.payload; return msg; }
const words = msg.payload;
if (words === 'stream') return [[Object.assign({}, msg, { payload: 'one ', partial: true }), Object.assign({}, msg, { payload: 'two ', partial: true }), Object.assign({}, msg, { payload: 'three' })]];
if (words === 'slow' || words === 'late') { setTimeout(() => { msg.payload = 'too ' + words; node.send(msg); }, 400); return null; }
if (words === 'bye') { msg.end = true; msg.payload = { transfer: '+14155550100', reason: 'asked for a person' }; return msg; }
if (words === 'vars') { msg.payload = 'Caller ' + msg.vars.call.from + ' from ' + msg.session.channel; return msg; }
if (words === 'french') { msg.relay = { type: 'language', ttsLanguage: 'fr-FR', transcriptionLanguage: 'fr-FR' }; msg.payload = 'Bonjour'; msg.lang = 'fr-FR'; return msg; }
if (words === 'config') { delete msg.payload; msg.relay = { type: 'config', interruptible: 'none', languages: [{ code: 'de-DE', voice: 'de-DE-Neural2-B', hints: ['Zahlung', 'Konto'] }], future: { nested: [1, true, null] } }; return msg; }
if (a.type !== 'prompt') { msg.payload = 'seen ' + a.type + ' ' + JSON.stringify(msg.payload); return msg; }
msg.payload = 'echo ' + words + ' (' + a.lang + ')';
return msg;
`;

/** The agent through a real Node-RED: TwiML, the relay WebSocket, turns, hand-off and faults. */
describe('AI agent (ConversationRelay) through a real Node-RED', function () {
  this.timeout(30000);
  let red: NodeRed;
  const env = voiceEnvironment('vagent');
  const pub = voiceEnvironment('vagentpub', { publicBaseUrl: 'https://ivr.example.com' });
  const ext = voiceEnvironment('vagentext');
  const retry = voiceEnvironment('vagentretry');
  const gone = voiceEnvironment('vagentgone');
  const shadow = voiceEnvironment('vagentshadow');
  let flows: FlowNode[];

  before(async function () {
    red = await NodeRed.start({ settings: { httpNodeRoot: '/hooks' } });
    flows = [
      env,
      pub,
      ext,
      retry,
      gone,
      shadow,
      tab('pAgent', 'Phone agent'),
      node('telco-call-start', 'cs', 'pAgent', { environment: 'vagent' }, [['ag']]),
      node('telco-call-start', 'cspub', 'pAgent', { environment: 'vagentpub' }, [['ag']]),
      node(
        'telco-voice-agent',
        'ag',
        'pAgent',
        {
          url: '',
          welcomeGreeting: 'Hi {call.from}, how can I help?',
          language: 'en-US',
          voice: 'en-US-Journey-O',
          ttsProvider: 'Google',
          transcriptionProvider: 'Deepgram',
          interruptible: 'speech',
          dtmfDetection: true,
          parameters: [
            { name: 'caller', value: '{call.from}' },
            { name: 'tier', value: 'gold' },
          ],
          attributes: [
            { name: 'applicationReconnect', value: 'true' },
            { name: 'hints', value: 'Node-RED, {call.from}' },
            { name: 'speechModel', value: '{call.nothing}' },
            { name: '', value: 'a row left empty' },
          ],
          resultVariable: 'agent',
        },
        [['after'], ['agerr'], ['model']],
      ),
      node('function', 'model', 'pAgent', { func: MODEL, outputs: 1 }, [['say']]),
      node('telco-voice-agent-say', 'say', 'pAgent', {}, [[], ['sayerr']]),
      node('function', 'sayerr', 'pAgent', { func: "node.warn('say failed ' + msg.error.code + ': ' + msg.payload); return null;", outputs: 1 }, [[]]),
      node('output-task', 'after', 'pAgent', { text: 'Handing you to a person: {agent.handoffData.reason}, status {agent.status}.' }, [['dial'], []]),
      node('telco-voice-dial', 'dial', 'pAgent', { destination: '{agent.handoffData.transfer}' }, [['bye'], []]),
      node('output-task', 'agerr', 'pAgent', { text: 'The agent failed with {error.code}.' }, [['bye'], []]),
      node('end-task', 'bye', 'pAgent', {}),

      tab('pExt', 'External agent'),
      node('telco-call-start', 'csext', 'pExt', { environment: 'vagentext' }, [['agext']]),
      node('telco-voice-agent', 'agext', 'pExt', { url: 'wss://agent.example.com/ws?caller={call.from}', resultVariable: 'bot' }, [
        ['extout'],
        [],
        ['extturn'],
      ]),
      node('function', 'extturn', 'pExt', { func: "node.warn('external turn'); return null;", outputs: 1 }, [[]]),
      node('output-task', 'extout', 'pExt', { text: 'Back from the bot: {bot.handoffData}.' }, [['extend'], []]),
      node('end-task', 'extend', 'pExt', {}),

      tab('pRetry', 'External agent, tried again on its error branch'),
      node('telco-call-start', 'csretry', 'pRetry', { environment: 'vagentretry' }, [['agretry']]),
      node('telco-voice-agent', 'agretry', 'pRetry', { url: 'wss://agent.example.com/ws', resultVariable: 'bot' }, [['retryend'], ['retryerr'], []]),
      node('output-task', 'retryerr', 'pRetry', { text: 'The agent failed with {error.code}; once more.' }, [['agretry'], []]),
      node('end-task', 'retryend', 'pRetry', {}),

      // After the relay, the flow says a line and waits for an answer: a caller who hung up ends the Session there.
      tab('pGone', 'Agent, then a question'),
      node('telco-call-start', 'csgone', 'pGone', { environment: 'vagentgone' }, [['aggone']]),
      node('telco-voice-agent', 'aggone', 'pGone', { url: '', resultVariable: 'agent' }, [['goneout'], [], []]),
      node('output-task', 'goneout', 'pGone', { text: 'Relay {agent.status}: {agent.handoffData.reason}.' }, [['goneask'], []]),
      node('input-task', 'goneask', 'pGone', { prompt: 'Anything else?', resultVariable: 'more' }, [[], []]),

      // An extra attribute that would set one the Task sets from a property (the provider reads names in any case).
      tab('pShadow', 'Agent with an attribute that shadows a property'),
      node('telco-call-start', 'csshadow', 'pShadow', { environment: 'vagentshadow' }, [['agshadow']]),
      node('telco-voice-agent', 'agshadow', 'pShadow', { url: '', voice: 'en-US-Journey-O', attributes: [{ name: 'VOICE', value: 'another' }] }, [
        [],
        ['shadowerr'],
        [],
      ]),
      node('output-task', 'shadowerr', 'pShadow', { text: '{error.code}: {error.message}' }, [['shadowend'], []]),
      node('end-task', 'shadowend', 'pShadow', {}),
    ];
    await red.deploy(flows);
  });
  after(async function () {
    await red?.close();
  });

  /** A call answered by the AI agent: its TwiML, the relay URL in it, and the action. */
  async function callToAgent(environment = env) {
    const call = new FakeTwilioCall(red, environment === pub ? { publicBaseUrl: 'https://ivr.example.com' } : {});
    const answer = await call.post(`/hooks/api/TelcoModule/Voice/start/${environment.token}`, call.baseParams());
    should(answer.status).equal(200, answer.text);
    const connect = answer.verbs.find((v) => v.verb === 'Connect') as ParsedVerb;
    should.exist(connect, answer.text);
    const relay = connect.children[0];
    return { call, answer, connect, relay, url: relay.attrs.url, action: connect.attrs.action };
  }

  async function openRelay(url: string) {
    const relay = await FakeConversationRelay.connect(red.url(''), url);
    return relay;
  }

  function relayEnd(call: FakeTwilioCall, action: string, fields: Record<string, string>, headers: Record<string, string> = {}): Promise<CallAnswer> {
    const path = action.startsWith('http') ? new URL(action).pathname : action;
    return call.post(path, { ...call.baseParams(), SessionId: 'VX' + '0'.repeat(32), ...fields }, headers);
  }

  it('answers <Connect action><ConversationRelay> with the properties as attributes (placeholders resolved) and <Parameter> children, and waits', async function () {
    const { call, answer, connect, relay, url } = await callToAgent();
    should(answer.verbs.map((v) => v.verb)).eql(['Connect']);
    should(connect.attrs).eql({ action: '/hooks/api/TelcoModule/Voice/next/vagent', method: 'POST' });
    should(relay.verb).equal('ConversationRelay');
    should(relay.attrs).have.properties({
      welcomeGreeting: 'Hi +14155550123, how can I help?',
      language: 'en-US',
      voice: 'en-US-Journey-O',
      ttsProvider: 'Google',
      transcriptionProvider: 'Deepgram',
      interruptible: 'speech',
      dtmfDetection: 'true',
      // More attributes, as they are, placeholders resolved; one resolved to nothing is not written.
      applicationReconnect: 'true',
      hints: 'Node-RED, +14155550123',
    });
    should(relay.attrs).not.have.property('speechModel');
    // Without a public base URL the relay is on the address the provider called, as ws(s)://.
    should(url).match(new RegExp(`^ws://127\\.0\\.0\\.1:${red.port}/hooks/api/TelcoModule/Voice/relay/vagent\\?call=${call.callSid}&relay=[\\w-]{16}$`));
    should(relay.children.map((p) => p.attrs)).eql([
      { name: 'caller', value: '+14155550123' },
      { name: 'tier', value: 'gold' },
    ]);
    const session = await sessionOfCall(red, call.callSid);
    should(session.state).equal('waiting');
    should(session.waitingAt.nodeId).equal('ag');
  });

  it('puts the relay on the public base URL as wss://, signed over that URL', async function () {
    const { url } = await callToAgent(pub);
    should(url).match(/^wss:\/\/ivr\.example\.com\/hooks\/api\/TelcoModule\/Voice\/relay\/vagentpub\?call=CA\w+&relay=[\w-]+$/);
    const relay = await FakeConversationRelay.connect(red.url(''), url);
    relay.prompt('hello');
    should((await relay.frames(1))[0]).eql({ type: 'text', token: 'echo hello (en-US)', last: true });
    await relay.close();
  });

  it('refuses the upgrade with 403 when the signature is wrong, and closes a relay id no waiting Session knows', async function () {
    const mark = red.logs.length;
    const { url } = await callToAgent();
    const refused = await FakeConversationRelay.connect(red.url(''), url, { signature: 'forged' }).then(
      () => 0,
      (err: { status?: number }) => err.status,
    );
    should(refused).equal(403);
    const signedElsewhere = await FakeConversationRelay.connect(red.url(''), url, { signingKey: 'another-account-token' }).then(
      () => 0,
      (err: { status?: number }) => err.status,
    );
    should(signedElsewhere).equal(403);
    await eventually(() => logsSince(red, mark).some((l) => /4020 WebhookSignatureInvalid: relay WebSocket refused/.test(l)), 3000, 'the 4020 log line');

    const unknown = await FakeConversationRelay.connect(red.url(''), url.replace(/relay=[\w-]+/, 'relay=not-a-relay'));
    should(await unknown.closed).have.property('code', 4404);
    // The real one still connects.
    const relay = await openRelay(url);
    relay.prompt('still here');
    should((await relay.frames(1))[0].token).equal('echo still here (en-US)');
    await relay.close();
  });

  it('emits prompt (only when last), dtmf and interrupt turns with msg.agent, the Session and its variables', async function () {
    const mark = red.logs.length;
    const { call, url } = await callToAgent();
    const relay = await openRelay(url);
    relay.setup(call.callSid, { caller: '+14155550123' });
    relay.prompt('va', false);
    relay.prompt('vars');
    relay.dtmf('5');
    const frames = await relay.frames(2);
    should(frames).eql([
      { type: 'text', token: 'Caller +14155550123 from TelcoVoice', last: true },
      { type: 'text', token: 'You pressed 5', last: true },
    ]);
    relay.interrupt('You pressed');
    await eventually(() => logsSince(red, mark).some((l) => /interrupt: You pressed/.test(l)), 3000, 'the interrupt turn');
    // The partial prompt was no turn: two answers only.
    await new Promise((r) => setTimeout(r, 200));
    should(relay.received.length).equal(2);
    await relay.close();
  });

  it('drops what is still coming for a turn the caller interrupted', async function () {
    const { url } = await callToAgent();
    const relay = await openRelay(url);
    relay.prompt('slow');
    relay.interrupt('');
    relay.prompt('after');
    should((await relay.frames(1))[0].token).equal('echo after (en-US)');
    await new Promise((r) => setTimeout(r, 700));
    should(relay.received.map((f) => f.token)).eql(['echo after (en-US)']);
    await relay.close();
  });

  it('streams tokens in order with last only on the final one', async function () {
    const { url } = await callToAgent();
    const relay = await openRelay(url);
    relay.prompt('stream');
    should(await relay.frames(3)).eql([
      { type: 'text', token: 'one ', last: false },
      { type: 'text', token: 'two ', last: false },
      { type: 'text', token: 'three', last: true },
    ]);
    await relay.close();
  });

  it('keeps two calls at once apart: each relay hears only its own answers, in order', async function () {
    const [a, b] = await Promise.all([callToAgent(), callToAgent()]);
    const [ra, rb] = await Promise.all([openRelay(a.url), openRelay(b.url)]);
    for (let i = 0; i < 20; i++) {
      ra.prompt(`a${i}`);
      rb.prompt(`b${i}`);
    }
    const [fa, fb] = await Promise.all([ra.frames(20), rb.frames(20)]);
    should(fa.map((f) => f.token)).eql(Array.from({ length: 20 }, (_, i) => `echo a${i} (en-US)`));
    should(fb.map((f) => f.token)).eql(Array.from({ length: 20 }, (_, i) => `echo b${i} (en-US)`));
    await Promise.all([ra.close(), rb.close()]);
  });

  it('ends with hand-off data; the action URL resumes output 1 with {agent}, once however often it is posted', async function () {
    const { call, url, action } = await callToAgent();
    const relay = await openRelay(url);
    relay.prompt('bye');
    const [end] = await relay.frames(1);
    should(end.type).equal('end');
    should(JSON.parse(end.handoffData)).eql({ transfer: '+14155550100', reason: 'asked for a person' });
    await relay.close();

    const fields = { SessionStatus: 'ended', SessionDuration: '42', HandoffData: end.handoffData, CallStatus: 'in-progress' };
    const headers = { 'I-Twilio-Idempotency-Token': 'relay-end-1' };
    const first = await relayEnd(call, action, fields, headers);
    should(first.verbs.map((v) => [v.verb, v.text])).eql([
      ['Say', 'Handing you to a person: asked for a person, status ended.'],
      ['Dial', '+14155550100'],
      ['Hangup', ''],
    ]);
    const again = await relayEnd(call, action, fields, headers);
    should(again.text).equal(first.text);
    const session = await sessionOfCall(red, call.callSid);
    should(session.state).equal('completed');
    should(session.vars.agent).eql({
      handoffData: { transfer: '+14155550100', reason: 'asked for a person' },
      status: 'ended',
      duration: 42,
      errorCode: '',
      errorMessage: '',
      reconnects: 0,
    });
    should(session.history.filter((h: any) => /Handing you to a person/.test(h.text)).length).equal(1);
  });

  it('gives the result on output 1 when the caller hung up during the relay (CallStatus completed), then ends the Session, once however often it is posted', async function () {
    const call = new FakeTwilioCall(red);
    const answer = await call.post(`/hooks/api/TelcoModule/Voice/start/${gone.token}`, call.baseParams());
    const action = answer.verbs[0].attrs.action;
    // What ConversationRelay posts when the caller hangs up: the relay's fields, and the call is over.
    const handoff = JSON.stringify({ reason: 'caller left' });
    const fields = { CallStatus: 'completed', SessionStatus: 'completed', SessionDuration: '17', HandoffData: handoff };
    const headers = { 'I-Twilio-Idempotency-Token': 'relay-over-1' };
    // The provider's retry crossing the first post: the relay's end reaches the flow once, never the question after it.
    const [first, again] = await Promise.all([relayEnd(call, action, fields, headers), relayEnd(call, action, fields, headers)]);
    should([first.status, again.status]).eql([200, 200]);
    should([first.verbs, again.verbs]).eql([[], []]);
    const session = await sessionOfCall(red, call.callSid);
    should(session.vars).not.have.property('more');
    should(session.vars.agent).eql({
      handoffData: { reason: 'caller left' },
      status: 'completed',
      duration: 17,
      errorCode: '',
      errorMessage: '',
      reconnects: 0,
    });
    should(session.history.filter((h: any) => h.from === 'bot' && h.text === 'Relay completed: caller left.').length).equal(1);
    should(session.state).equal('ended');
    should(session.endReason).match(/The call ended \(CallStatus completed\)/);
  });

  it('answers the same relay again after 64105, at most 3 times, then takes the error branch with 4001', async function () {
    const { call, url, action } = await callToAgent();
    for (let i = 1; i <= 3; i++) {
      const again = await relayEnd(call, action, { SessionStatus: 'failed', ErrorCode: '64105', ErrorMessage: 'WebSocket ended abruptly' });
      should(again.verbs.map((v) => v.verb)).eql(['Connect']);
      const relay = again.verbs[0].children[0];
      should(relay.attrs.url).equal(url);
      should(relay.attrs).not.have.property('welcomeGreeting');
      should(relay.attrs.interruptible).equal('speech');
      if (i === 2) {
        // The caller is still connected: a new socket on the same relay works.
        const socket = await openRelay(url);
        socket.prompt(`again ${i}`);
        should((await socket.frames(1))[0].token).equal(`echo again ${i} (en-US)`);
        await socket.close();
      }
    }
    const fourth = await relayEnd(call, action, { SessionStatus: 'failed', ErrorCode: '64105', ErrorMessage: 'WebSocket ended abruptly' });
    should(fourth.verbs.map((v) => [v.verb, v.text])).eql([
      ['Say', 'The agent failed with 4001.'],
      ['Hangup', ''],
    ]);
    const session = await sessionOfCall(red, call.callSid);
    should(session.log.find((e: any) => e.code === 4001 && e.level === 'error').message).match(/dropped 4 times/);
  });

  it('counts the 64105 reconnects of an external agent afresh when the Task is entered again after its 4001', async function () {
    const call = new FakeTwilioCall(red);
    const answer = await call.post(`/hooks/api/TelcoModule/Voice/start/${retry.token}`, call.baseParams());
    const action = answer.verbs[0].attrs.action;
    const dropped = { SessionStatus: 'failed', ErrorCode: '64105', ErrorMessage: 'WebSocket ended abruptly' };
    for (let i = 1; i <= 3; i++) should((await relayEnd(call, action, dropped)).verbs.map((v) => v.verb)).eql(['Connect']);
    // The fourth drop takes the error branch, which enters the AI agent again: a new relay, greeted.
    const fourth = await relayEnd(call, action, dropped);
    should(fourth.verbs.map((v) => [v.verb, v.text])).eql([
      ['Say', 'The agent failed with 4001; once more.'],
      ['Connect', ''],
    ]);
    // Its first drop is reconnect 1 of 3, not a fifth.
    const fifth = await relayEnd(call, action, dropped);
    should(fifth.verbs.map((v) => v.verb)).eql(['Connect']);
    should(fifth.verbs[0].children[0].attrs.url).equal('wss://agent.example.com/ws');
  });

  it('sends a say after its relay closed to Agent say output 2 with 4012, and Node-RED runs on', async function () {
    const mark = red.logs.length;
    const { url } = await callToAgent();
    const relay = await openRelay(url);
    relay.prompt('late');
    await new Promise((r) => setTimeout(r, 50));
    await relay.close();
    await eventually(() => logsSince(red, mark).some((l) => /say failed 4012: too late/.test(l)), 3000, 'the 4012 on output 2');
    // Node-RED runs on: the next call is answered.
    should((await callToAgent()).answer.status).equal(200);
  });

  it('closes the relays cleanly on a deploy; the 64105 that follows reconnects to the new flow', async function () {
    const { call, url, action } = await callToAgent();
    const relay = await openRelay(url);
    relay.prompt('before');
    await relay.frames(1);
    await red.deploy(flows);
    should(await relay.closed).have.property('code', 1001);
    const again = await relayEnd(call, action, { SessionStatus: 'failed', ErrorCode: '64105' });
    should(again.verbs[0].children[0].attrs.url).equal(url);
    const next = await openRelay(url);
    next.prompt('after the deploy');
    should((await next.frames(1))[0].token).equal('echo after the deploy (en-US)');
    await next.close();
  });

  it("closes the call's relay when its Session ends (the End button): no turn reaches the flow after, and the action URL that follows hangs up", async function () {
    const mark = red.logs.length;
    const { call, url, action } = await callToAgent();
    const relay = await openRelay(url);
    relay.prompt('before');
    await relay.frames(1);
    const session = await sessionOfCall(red, call.callSid);
    should((await red.admin('DELETE', `/channel-sessions/sessions/${session.id}`)).status).equal(200);
    should(await relay.closed).eql({ code: 1000, reason: 'the Session ended' });
    // What ConversationRelay posts when its socket closes: the call has no Session to go back to.
    const after = await relayEnd(call, action, { SessionStatus: 'ended' });
    should(after.verbs.map((v) => v.verb)).eql(['Hangup']);
    should(logsSince(red, mark).filter((l) => /echo/.test(l))).eql([]);
  });

  it('drops a frame that arrives after the relay closed: a caller who spoke as the Session ended reaches no flow', async function () {
    const mark = red.logs.length;
    const { call, url } = await callToAgent();
    // The caller's words (and a frame of no known type) cross the server's close frame: sent after it arrived, before the answering close.
    const relay = await RawRelaySocket.connect(red.url(''), url, (socket) => {
      socket.prompt('crossing the end');
      socket.sendRaw('not json {');
    });
    relay.prompt('before');
    await eventually(() => relay.received.length === 1, 3000, 'the answer before the end');
    const session = await sessionOfCall(red, call.callSid);
    should((await red.admin('DELETE', `/channel-sessions/sessions/${session.id}`)).status).equal(200);
    should(await relay.closed).eql({ code: 1000, reason: 'the Session ended' });
    // A turn would reach Agent say, whose 4012 for the closed relay names the words in the log; a
    // frame read at all would be logged as of no known type. Neither is.
    await new Promise((r) => setTimeout(r, 500));
    should(logsSince(red, mark).filter((l) => /crossing the end/.test(l) || l.includes(`relay of call ${call.callSid}: ignored`))).eql([]);
  });

  it('refuses an upgrade whose path does not decode with 400, and Node-RED runs on', async function () {
    const answer = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = request(red.url('/hooks/api/TelcoModule/Voice/relay/%E0%A4%A?call=CA1&relay=r1'), {
        headers: { Connection: 'Upgrade', Upgrade: 'websocket', 'Sec-WebSocket-Version': '13', 'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==' },
      });
      req.on('upgrade', () => reject(new Error('upgraded')));
      req.on('response', (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      });
      req.on('error', reject);
      req.end();
    });
    should(answer).eql({ status: 400, text: 'Bad Request' });
    // Still serving: a relay of a real call connects and talks.
    const { url } = await callToAgent();
    const relay = await openRelay(url);
    relay.prompt('after the bad path');
    should((await relay.frames(1))[0].token).equal('echo after the bad path (en-US)');
    await relay.close();
  });

  it('logs a frame that is not JSON or has no type once, ignores it, and goes on; one of a type it does not know goes to the flow', async function () {
    const mark = red.logs.length;
    const { url } = await callToAgent();
    const relay = await openRelay(url);
    relay.sendRaw('not json {');
    relay.send({ type: 'telepathy' });
    relay.sendRaw(Buffer.from([1, 2, 3]));
    relay.send({ type: 'prompt' });
    relay.sendRaw('[]');
    relay.send({ type: 7 });
    relay.send({ kind: 'prompt' });
    relay.prompt('fine');
    should((await relay.frames(2)).map((f) => f.token)).eql(['seen telepathy {"type":"telepathy"}', 'echo fine (en-US)']);
    // The log reaches the test through the runtime's stdout pipe, which can trail the frame on the socket.
    const ignored = () => logsSince(red, mark).filter((l) => /ignored a message that is not JSON or has no type/.test(l));
    await eventually(() => ignored().length > 0, 3000, 'the ignored-frame log line');
    should(ignored().length).equal(1);
    await relay.close();
  });

  it('refuses an attribute in More attributes that shadows a property (any case) with 3005 on the error branch, before any relay', async function () {
    const call = new FakeTwilioCall(red);
    const answer = await call.post(`/hooks/api/TelcoModule/Voice/start/${shadow.token}`, call.baseParams());
    should(answer.verbs.map((v) => v.verb)).eql(['Say', 'Hangup']);
    should(answer.verbs[0].text).match(/^3005: The ConversationRelay attribute "VOICE" is set by the AI agent's own property \(voice\)/);
  });

  it('sends msg.relay as one frame as it is, before the text, and msg.lang as the lang of the text frame', async function () {
    const { url } = await callToAgent();
    const relay = await openRelay(url);
    relay.prompt('french');
    relay.prompt('config');
    should(await relay.frames(3)).eql([
      { type: 'language', ttsLanguage: 'fr-FR', transcriptionLanguage: 'fr-FR' },
      { type: 'text', token: 'Bonjour', last: true, lang: 'fr-FR' },
      {
        type: 'config',
        interruptible: 'none',
        languages: [{ code: 'de-DE', voice: 'de-DE-Neural2-B', hints: ['Zahlung', 'Konto'] }],
        future: { nested: [1, true, null] },
      },
    ]);
    await relay.close();
  });

  it('sends a provider message of a type it does not model (configUpdated) out of output 3 whole, with msg.agent.type its type', async function () {
    const mark = red.logs.length;
    const { url } = await callToAgent();
    const relay = await openRelay(url);
    const update = { type: 'configUpdated', interruptible: 'none', languages: [{ code: 'de-DE' }], lang: 'de-DE' };
    relay.configUpdated(update);
    relay.prompt('after');
    should(await relay.frames(2)).eql([
      { type: 'text', token: `seen configUpdated ${JSON.stringify(update)}`, last: true },
      { type: 'text', token: 'echo after (en-US)', last: true },
    ]);
    should(logsSince(red, mark).filter((l) => /ignored a message/.test(l))).eql([]);
    await relay.close();
  });

  it('uses an external agent server when url is set: its TwiML, never output 3, and the return with {bot}', async function () {
    const mark = red.logs.length;
    const call = new FakeTwilioCall(red);
    const answer = await call.post(`/hooks/api/TelcoModule/Voice/start/${ext.token}`, call.baseParams());
    const connect = answer.verbs[0];
    should(connect.attrs.action).equal('/hooks/api/TelcoModule/Voice/next/vagentext');
    should(connect.children[0].attrs).eql({ url: 'wss://agent.example.com/ws?caller=+14155550123', interruptible: 'any', dtmfDetection: 'true' });
    const back = await relayEnd(call, connect.attrs.action, { SessionStatus: 'completed', HandoffData: 'plain words', CallStatus: 'in-progress' });
    should(back.verbs.map((v) => v.text)).eql(['Back from the bot: plain words.', '']);
    should(logsSince(red, mark).some((l) => /external turn/.test(l))).be.false();
  });
});
