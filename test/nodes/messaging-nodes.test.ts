import should from 'should';
import { node, tab } from '../harness/flows';
import {
  helper, load, logOf, messagesOf, nextMessage, reply, sessionDetail, startTestSession, statusMatching, statusesOf,
} from '../harness/helper';

/** The messaging node set in-process; starts and buttons in the Test chat, where no provider is needed. */
describe('messaging nodes (node-red-node-test-helper)', function () {
  const credentials = {
    envM: { accountSid: 'AC00000000000000000000000000000002', authToken: 'messaging-auth-token', webhookSigningSecret: '', token: 'msNodeToken0123456789ab' },
  };
  const env = (props: Record<string, unknown> = {}) => ({ id: 'envM', type: 'telco-messaging-environment', name: 'Texts', ...props });

  afterEach(async function () {
    await helper.unload();
  });

  describe('telco-messaging-environment', function () {
    it('loads with its credentials and logs its inbound URL with its token', async function () {
      await load([env({ publicBaseUrl: 'https://sms.example.com' })], credentials);
      should(helper.getNode('envM').credentials).eql(credentials.envM);
      should(logOf('envM', 'info')).eql(['Inbound URL: https://sms.example.com/api/TelcoModule/Messaging/inbound/msNodeToken0123456789ab']);
      should(logOf('envM', 'warn')).eql([]);
    });

    it('logs the inbound path without a public base URL; warns without a token and when signature checks are off', async function () {
      await load([env()], credentials);
      should(logOf('envM', 'info')).eql(['Inbound URL: /api/TelcoModule/Messaging/inbound/msNodeToken0123456789ab (set the Public base URL for the full address)']);
      await helper.unload();
      await load([env({ validateSignatures: false })], {});
      const warnings = logOf('envM', 'warn').join('\n');
      should(warnings).match(/No token: open this Environment in the editor/);
      should(warnings).match(/Validate Signatures is off/);
    });
  });

  for (const [type, channelPrefix] of [['telco-sms-start', ''], ['telco-messenger-start', 'whatsapp:']] as const) {
    describe(type, function () {
      it('shows the Environment it serves, or that none is selected', async function () {
        await load([
          tab('t1'), env(), node(type, 'm1', 't1', { environment: 'envM', variable: 'message' }, [[]]),
          tab('t2'), node(type, 'm2', 't2', { environment: '' }, [[]]),
        ], credentials);
        should(await statusMatching('m1', /serves/)).eql({ fill: 'green', shape: 'ring', text: 'serves Texts' });
        should(statusesOf('m2')).containEql({ fill: 'red', shape: 'ring', text: 'no Environment selected' });
      });

      it('sends {message} from the test data in a Test chat Session, or asks for the opening message', async function () {
        await load([
          tab('t1'), env(),
          node(type, 'm1', 't1', { environment: 'envM', variable: 'sms', testData: { text: 'STOP', from: '+15555550111' } }, [['h1']]),
          tab('t2'), node(type, 'm2', 't2', { environment: 'envM', testData: {} }, [['h2']]),
          node('helper', 'h1', 't1'), node('helper', 'h2', 't2'),
        ], credentials);
        await startTestSession('m1');
        const msg = await nextMessage('h1');
        should(msg.vars.sms).have.properties({ text: 'STOP', from: `${channelPrefix}+15555550111`, channel: 'Chat', isTest: true });
        const asking = await startTestSession('m2');
        should(asking.state).equal('waiting');
        should(messagesOf('h2')).eql([]);
        await reply(asking.id, 'hello');
        should((await nextMessage('h2')).vars.message.text).equal('hello');
      });
    });
  }

  describe('telco-messenger-buttons', function () {
    it('shows its preview in the Test chat, waits, and sends the reply on output 1 in its Store variable', async function () {
      await load([
        tab('t1'), env(),
        node('telco-messenger-start', 'm1', 't1', { environment: 'envM', testData: { text: 'hi', profileName: 'Ada' } }, [['b1']]),
        node('telco-messenger-buttons', 'b1', 't1', {
          contentSid: 'HX00000000000000000000000000000001', previewText: 'Pick one, {message.profileName}', resultVariable: '{pick}',
        }, [['h1'], ['h2']]),
        node('helper', 'h1', 't1'), node('helper', 'h2', 't1'),
      ], credentials);
      const session = await startTestSession('m1');
      should(session.state).equal('waiting');
      should(statusesOf('b1')).containEql({ text: 'preview shown' });
      const shown = (await sessionDetail(session.id)).transcript.find((l: any) => l.kind === 'buttons');
      should(shown).have.properties({ text: 'Pick one, Ada', detail: { contentSid: 'HX00000000000000000000000000000001' } });
      await reply(session.id, 'Yes');
      const msg = await nextMessage('h1');
      should(msg.vars.pick).eql({ payload: 'Yes', text: 'Yes', message: 'Yes', tapped: false });
    });
  });
});
