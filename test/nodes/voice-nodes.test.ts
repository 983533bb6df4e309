import { join } from 'node:path';
import should from 'should';
import { runEditorScripts } from '../harness/editor-script';
import { node, tab } from '../harness/flows';
import {
  helper, load, logOf, messagesOf, nextMessage, reply, sessionDetail, startTestSession, statusMatching, statusesOf,
} from '../harness/helper';
import { REPO_ROOT } from '../harness/node-red';

/** The voice node set in-process; its Tasks run in the Test chat, where no call and no provider is needed. */
describe('voice nodes (node-red-node-test-helper)', function () {
  const credentials = {
    envV: { accountSid: 'AC00000000000000000000000000000001', authToken: 'voice-auth-token', webhookSigningSecret: '', token: 'vcNodeToken0123456789ab' },
  };
  const env = (props: Record<string, unknown> = {}) => ({ id: 'envV', type: 'telco-voice-environment', name: 'Phone line', ...props });
  /** call start -> task -> helper (done) / helper (error) */
  const flow = (type: string, props: Record<string, unknown>) => [
    tab('t1'), env(),
    node('telco-call-start', 'c1', 't1', { environment: 'envV', variable: 'call', testData: { from: '+14155550123' } }, [['x1']]),
    node(type, 'x1', 't1', props, [['h1'], ['h2']]),
    node('helper', 'h1', 't1'), node('helper', 'h2', 't1'),
  ];
  const transcript = async (id: string) => (await sessionDetail(id)).transcript.map((l: any) => l.text);

  afterEach(async function () {
    await helper.unload();
  });

  describe('telco-voice-environment', function () {
    it('loads with its credentials and logs the start URL with its token', async function () {
      await load([env({ publicBaseUrl: 'https://voice.example.com/' })], credentials);
      should(helper.getNode('envV').credentials).eql(credentials.envV);
      should(logOf('envV', 'info')).eql(['Start URL: https://voice.example.com/api/TelcoModule/Voice/start/vcNodeToken0123456789ab']);
      should(logOf('envV', 'warn')).eql([]);
    });

    it('warns without a token and when signature checks are off', async function () {
      await load([env({ validateSignatures: false })], {});
      const warnings = logOf('envV', 'warn').join('\n');
      should(warnings).match(/No token: open this Environment in the editor/);
      should(warnings).match(/Validate Signatures is off/);
    });
  });

  describe('telco-call-start', function () {
    it('shows the Environment it serves, or that none is selected', async function () {
      await load([
        ...flow('end-task', {}),
        tab('t2'), node('telco-call-start', 'c2', 't2', { environment: '' }, [[]]),
      ], credentials);
      should(await statusMatching('c1', /serves/)).eql({ fill: 'green', shape: 'ring', text: 'serves Phone line' });
      should(statusesOf('c2')).containEql({ fill: 'red', shape: 'ring', text: 'no Environment selected' });
    });

    it('sends {call} from the test data in a Test chat Session', async function () {
      await load([
        tab('t1'), env(),
        node('telco-call-start', 'c1', 't1', { environment: 'envV', testData: { from: '+14155550123', callerName: 'Ada' } }, [['h1']]),
        node('helper', 'h1', 't1'),
      ], credentials);
      await startTestSession('c1');
      const msg = await nextMessage('h1');
      should(msg.vars.call).have.properties({ from: '+14155550123', callerName: 'Ada', direction: 'inbound', channel: 'Chat', isTest: true });
      should(msg.vars.call.callId).match(/^CA-test-/);
    });
  });

  describe('telco-call-out', function () {
    /** Call out's four outputs to four helpers. */
    const outFlow = (testData: Record<string, unknown>, props: Record<string, unknown> = {}) => [
      tab('t1'), env({ callerId: '+14155550100', publicBaseUrl: 'https://voice.example.com' }),
      node('telco-call-out', 'o1', 't1', { environment: 'envV', variable: 'call', to: 'to', toType: 'msg', testData, ...props }, [['h1'], ['h2'], ['h3'], ['h4']]),
      node('helper', 'h1', 't1'), node('helper', 'h2', 't1'), node('helper', 'h3', 't1'), node('helper', 'h4', 't1'),
    ];

    it('is offered as a start in the Test chat: a person answering runs output 1 with {call}', async function () {
      await load(outFlow({ outcome: 'human', to: '+14155550123' }), credentials);
      const session = await startTestSession('o1');
      const msg = await nextMessage('h1');
      should(msg.session.id).equal(session.id);
      should(msg.vars.call).have.properties({ from: '+14155550123', direction: 'outbound-api', answeredBy: 'human', channel: 'Chat', isTest: true });
    });

    it('the test outcome machine runs output 4; busy and no-answer run output 3 with msg.call.status', async function () {
      await load(outFlow({ outcome: 'machine' }), credentials);
      await startTestSession('o1');
      should((await nextMessage('h4')).vars.call.answeredBy).equal('machine_end_beep');
      for (const outcome of ['busy', 'no-answer']) {
        await startTestSession('o1', { outcome });
        should((await nextMessage('h3')).call.status).equal(outcome);
      }
      should(messagesOf('h1')).be.empty();
    });

    it('shows red and says so at deploy with no Environment; a message then takes output 2 with 4008', async function () {
      await load([tab('t1'), node('telco-call-out', 'o1', 't1', { environment: '' }, [[], ['h2']]), node('helper', 'h2', 't1')], credentials);
      should(statusesOf('o1')).containEql({ fill: 'red', shape: 'ring', text: 'no Environment selected' });
      should(logOf('o1', 'error').join('\n')).match(/no voice Environment selected/);
      helper.getNode('o1').receive({ to: '+14155550123' });
      should((await nextMessage('h2')).error).have.properties({ code: 4008, name: 'ModuleMissingConfiguration' });
    });

    it('a message with a malformed number takes output 2 with 3005 before anything is sent', async function () {
      await load(outFlow({}), credentials);
      helper.getNode('o1').receive({ to: '+1 (415) 555' });
      const msg = await nextMessage('h2');
      should(msg.error.code).equal(3005);
      should(msg.error.message).match(/not a phone number in E\.164 form/);
      should(statusesOf('o1').pop()).eql({ fill: 'red', shape: 'dot', text: '3005 TaskInvalidData' });
    });
    it('the edit dialog refuses a typed-in To that the runtime refuses with 3005 (spaces, brackets, dashes)', async function () {
      const to = runEditorScripts(join(REPO_ROOT, 'nodes/voice.html')).types.get('telco-call-out')!.defaults!.to;
      for (const number of ['+1 415 555 0123', '+1 (415) 555-0123', '+1.415.555.0123']) {
        await load(outFlow({}, { to: number, toType: 'str' }), credentials);
        helper.getNode('o1').receive({});
        should((await nextMessage('h2')).error).match({ code: 3005, message: /not a phone number in E\.164 form/ });
        await helper.unload();
        should(to.validate!.call({ toType: 'str' }, number)).equal(false, `the dialog takes "${number}", which the runtime refuses`);
      }
      should(to.validate!.call({ toType: 'str' }, '+14155550123')).be.true();
      should(to.validate!.call({ toType: 'str' }, '{person.phone}')).be.true();
    });
  });

  describe('telco-voice-play', function () {
    it('shows the audio in the Test chat and sends the token on output 1', async function () {
      await load(flow('telco-voice-play', { mediaUrl: 'https://cdn.example.com/{call.callerName}hello.mp3', loop: 2 }), credentials);
      const session = await startTestSession('c1');
      should((await nextMessage('h1')).session.id).equal(session.id);
      should(await transcript(session.id)).containEql('[audio] https://cdn.example.com/hello.mp3 (x2)');
    });

    it('takes its error branch with 3005 for a Media URL that is not http(s)', async function () {
      await load(flow('telco-voice-play', { mediaUrl: 'ftp://cdn.example.com/a.mp3' }), credentials);
      await startTestSession('c1');
      const msg = await nextMessage('h2');
      should(msg.error).have.properties({ code: 3005, message: 'MediaUrl "ftp://cdn.example.com/a.mp3" is not an http(s) URL' });
      should(statusesOf('x1').pop()).eql({ fill: 'red', shape: 'dot', text: '3005 TaskInvalidData' });
    });
  });

  describe('telco-voice-record', function () {
    it('waits for the recording; in the Test chat the typed text stands for it, in its Store variables', async function () {
      await load(flow('telco-voice-record', { maxLength: 5000, urlVariable: '{recording}', sidVariable: 'recordingSid' }), credentials);
      const session = await startTestSession('c1');
      should(session.state).equal('waiting');
      should(await transcript(session.id)).containEql('[recording, up to 3600 s]');
      await reply(session.id, 'https://example.com/rec.wav');
      const msg = await nextMessage('h1');
      should(msg.vars.recording).equal('https://example.com/rec.wav');
      should(msg.vars.recordingSid).match(/^RE-test-/);
    });
  });

  describe('telco-voice-dial', function () {
    it('shows the transfer in the Test chat and sends the token on output 1', async function () {
      await load(flow('telco-voice-dial', { destination: '+1 (415) 555-0100', timeout: 20 }), credentials);
      const session = await startTestSession('c1');
      await nextMessage('h1');
      should(await transcript(session.id)).containEql('[transferring the call to +14155550100]');
    });

    it('takes its error branch with 3005 for a Destination or Caller ID that is not E.164, or an unknown Record mode', async function () {
      for (const [props, message] of [
        [{ destination: '{call.callerName}' }, /Destination "" is not an E\.164 number/],
        [{ destination: '+14155550100', callerId: '555' }, /CallerId "555" is not an E\.164 number/],
        [{ destination: '+14155550100', record: 'always' }, /RecordCall "always" is not one of/],
      ] as const) {
        await load(flow('telco-voice-dial', props), credentials);
        await startTestSession('c1');
        const msg = await nextMessage('h2');
        should(msg.error.code).equal(3005);
        should(msg.error.message).match(message);
        await helper.unload();
      }
    });
  });
});
