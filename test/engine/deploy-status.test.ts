import should from 'should';
import { watchStatuses } from '../harness/comms';
import { NodeRed, eventually } from '../harness/node-red';
import { node, tab } from '../harness/flows';
import { FakeTwilioApi } from '../fakes/twilio-api';
import { voiceEnvironment } from '../harness/voice-flows';

/** Config nodes show no status in the editor: an auto-deploy outcome shows on the Environment's starts. */
describe("auto-deploy outcome in the start nodes' status", function () {
  this.timeout(60000);
  let red: NodeRed;
  let api: FakeTwilioApi;
  const PN = 'PN' + 'a'.repeat(32);
  before(async function () {
    api = await FakeTwilioApi.start();
    api.addNumber(PN, '+14155550999');
    red = await NodeRed.start();
  });
  after(async function () {
    await red?.close();
    await api?.close();
  });

  it('shows "voice webhook set", "skipped" and messaging "skipped" where each applies', async function () {
    const statuses = await watchStatuses(red);
    await red.deploy([
      voiceEnvironment('vset', { autoDeploy: true, phoneNumberSid: PN, publicBaseUrl: 'https://ivr.example.com', apiUrl: api.url }),
      voiceEnvironment('vskip', { autoDeploy: true, phoneNumberSid: 'XX1', publicBaseUrl: 'https://ivr.example.com', apiUrl: api.url }),
      {
        id: 'mskip',
        type: 'telco-messaging-environment',
        name: 'Messaging skip',
        messagingServiceSid: '',
        autoDeploy: true,
        validateSignatures: true,
        publicBaseUrl: 'https://sms.example.com',
        apiUrl: api.url,
        sessionStore: '',
        maxSessions: 0,
        credentials: { accountSid: 'AC' + '0'.repeat(32), authToken: 'fake-auth-token', webhookSigningSecret: '', token: 'mskipTokenValue0000000001' },
      },
      tab('pSet', 'Set'),
      node('telco-call-start', 'sSet', 'pSet', { environment: 'vset' }, [[]]),
      tab('pSkip', 'Skip'),
      node('telco-call-start', 'sSkip', 'pSkip', { environment: 'vskip' }, [[]]),
      tab('pMsg', 'Msg'),
      node('telco-sms-start', 'sMsg', 'pMsg', { environment: 'mskip' }, [[]]),
    ]);
    const set = await eventually(() => statuses.get('sSet')?.text?.includes('webhook set') && statuses.get('sSet'), 5000, 'the set status');
    should(set.text).equal('serves Voice vset · voice webhook set');
    should(set.fill).equal('green');
    const skipped = await eventually(() => statuses.get('sSkip')?.text?.includes('skipped') && statuses.get('sSkip'), 5000, 'the skip status');
    should(skipped.text ?? '').match(/^serves Voice vskip · auto-deploy skipped/);
    should(skipped.fill).equal('yellow');
    const msg = await eventually(() => statuses.get('sMsg')?.text?.includes('skipped') && statuses.get('sMsg'), 5000, 'the messaging status');
    should(msg.text ?? '').match(/auto-deploy skipped/);
    statuses.close();
  });
});
