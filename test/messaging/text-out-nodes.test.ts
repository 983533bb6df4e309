import { join } from 'node:path';
import should from 'should';
import { node, tab } from '../harness/flows';
import { runEditorScripts } from '../harness/editor-script';
import { helper, load, logOf, nextMessage, sessionDetail, startTestSession, statusesOf } from '../harness/helper';
import { REPO_ROOT } from '../harness/node-red';

/** telco-message-out in-process: deploy checks, the edit dialog's checks, the error branch, the Test chat. */
describe('Text out node (node-red-node-test-helper)', function () {
  const credentials = {
    envM: { accountSid: 'AC00000000000000000000000000000002', authToken: 'messaging-auth-token', webhookSigningSecret: '', token: 'msOutToken0123456789abc' },
  };
  const env = { id: 'envM', type: 'telco-messaging-environment', name: 'Texts' };

  afterEach(async function () {
    await helper.unload();
  });

  it('shows red and says so at deploy without an Environment; a message then leaves on output 2 with 4008', async function () {
    await load([
      tab('t1'),
      node('telco-message-out', 'o1', 't1', { environment: '' }, [['h1'], ['h2']]),
      node('helper', 'h1', 't1'),
      node('helper', 'h2', 't1'),
    ]);
    should(statusesOf('o1')).containEql({ fill: 'red', shape: 'ring', text: 'no Environment selected' });
    should(logOf('o1', 'error').join('\n')).match(/no Environment selected/);
    helper.getNode('o1').receive({ to: '+15550001111', from: '+15550002222' });
    const out = await nextMessage('h2');
    should(out.error).match({ code: 4008, name: 'ModuleMissingConfiguration' });
  });

  it('shows red and refuses an Environment of another kind', async function () {
    await load([
      tab('t1'),
      { id: 'envV', type: 'telco-voice-environment', name: 'Calls' },
      node('telco-message-out', 'o1', 't1', { environment: 'envV' }, [[], []]),
    ]);
    should(statusesOf('o1')).containEql({ fill: 'red', shape: 'ring', text: 'wrong Environment: a telco-voice-environment' });
  });

  it('sends bad input to output 2 with 3005 and the field, keeping the message that came in', async function () {
    await load(
      [
        tab('t1'),
        env,
        node('telco-message-out', 'o1', 't1', { environment: 'envM' }, [['h1'], ['h2']]),
        node('helper', 'h1', 't1'),
        node('helper', 'h2', 't1'),
      ],
      credentials,
    );
    helper.getNode('o1').receive({ to: '+15550001111', topic: 'kept' });
    const out = await nextMessage('h2');
    should(out.topic).equal('kept');
    should(out.error).match({ code: 3005, name: 'TaskInvalidData', message: /^from \(msg\.from\): our number is missing/ });
    should(statusesOf('o1').pop()).eql({ fill: 'red', shape: 'dot', text: '3005 TaskInvalidData' });
  });

  it('reads the addresses from typed fields (str, msg property)', async function () {
    await load(
      [
        tab('t1'),
        env,
        node('telco-message-out', 'o1', 't1', { environment: 'envM', to: 'nope', toType: 'str', from: 'payload.ours', fromType: 'msg' }, [['h1'], ['h2']]),
        node('helper', 'h1', 't1'),
        node('helper', 'h2', 't1'),
      ],
      credentials,
    );
    helper.getNode('o1').receive({ payload: { ours: '+15550002222' } });
    should((await nextMessage('h2')).error.message).match(/^to: "nope" is not a number in E\.164 form/);
  });

  it('resolves placeholders of msg.vars in typed-in addresses, which the edit dialog accepts', async function () {
    const def = runEditorScripts(join(REPO_ROOT, 'nodes/messaging.html')).types.get('telco-message-out')!;
    should(def.defaults!.to.validate!.call({ toType: 'str' }, '{customer.phone}')).be.true();
    await load(
      [
        tab('t1'),
        env,
        node('telco-message-out', 'o1', 't1', { environment: 'envM', to: '{customer.phone}', toType: 'str', from: '{ours}', fromType: 'str' }, [
          ['h1', 'e1'],
          ['h2'],
        ]),
        node('helper', 'h1', 't1'),
        node('end-task', 'e1', 't1'),
        node('helper', 'h2', 't1'),
      ],
      credentials,
    );
    helper.getNode('o1').receive({ vars: { customer: { phone: '+15550001111' }, ours: '+15550002222' } });
    const msg = await nextMessage('h1').catch(async () => should.fail(null, null, `output 2: ${(await nextMessage('h2', 10)).error.message}`));
    should(msg.vars.message).have.properties({ from: '+15550001111', to: '+15550002222', direction: 'outbound' });
  });

  it('is offered as a start in the Test chat: output 1 carries {message} with direction outbound, no user line in the history', async function () {
    await load(
      [tab('t1'), env, node('telco-message-out', 'o1', 't1', { environment: 'envM', variable: 'sms' }, [['h1'], []]), node('helper', 'h1', 't1')],
      credentials,
    );
    const processes = (await helper.request().get('/channel-sessions/processes')).body;
    should(processes[0].starts.map((s: any) => s.type)).eql(['telco-message-out']);
    const session = await startTestSession('o1', { to: '+15550009999', from: '+15550001000', text: 'Your parcel' });
    const msg = await nextMessage('h1');
    should(msg.vars.sms).have.properties({
      from: '+15550009999',
      to: '+15550001000',
      text: 'Your parcel',
      direction: 'outbound',
      channel: 'Chat',
      isTest: true,
    });
    should(msg.payload).equal('Your parcel');
    should((await sessionDetail(session.id)).history).eql([]);
  });

  it('the edit dialog asks for an Environment, takes msg.to / msg.from by default and checks typed-in numbers', function () {
    const def = runEditorScripts(join(REPO_ROOT, 'nodes/messaging.html')).types.get('telco-message-out')!;
    should(def.inputs).equal(1);
    should(def.outputs).equal(2);
    const defaults = def.defaults!;
    should([defaults.to.value, defaults.toType.value, defaults.from.value, defaults.fromType.value, defaults.variable.value]).eql([
      'to',
      'msg',
      'from',
      'msg',
      'message',
    ]);
    should(defaults.environment).match({ type: 'telco-messaging-environment', required: true });
    const check = (property: 'to' | 'from', value: string, type: string) => defaults[property].validate!.call({ [`${property}Type`]: type }, value);
    should(check('to', '+15551234567', 'str')).be.true();
    should(check('to', 'whatsapp:+15551234567', 'str')).be.true();
    should(check('to', '5551234567', 'str')).be.false();
    should(check('from', '', 'str')).be.false();
    should(check('from', '{ours}', 'str')).be.true();
  });
});
