import should from 'should';
import { NodeRed } from '../harness/node-red';
import { node, tab } from '../harness/flows';

const INBOUND = '/api/TelcoModule/Messaging/inbound/';
const TOKEN = 'floodTokenValue000000000001';
const form = (i: number) =>
  new URLSearchParams({
    AccountSid: 'AC' + '0'.repeat(32),
    MessageSid: `SM${String(i).padStart(32, '0')}`,
    From: '+15559990001',
    To: '+15550001000',
    Body: 'forged',
  }).toString();

/** A flood of forged webhooks is refused every time but logged once per reason and minute. */
describe('refused webhooks in the log', function () {
  this.timeout(60000);
  let red: NodeRed;
  before(async function () {
    red = await NodeRed.start();
    await red.deploy([
      {
        id: 'envFlood',
        type: 'telco-messaging-environment',
        name: 'Flood',
        messagingServiceSid: '',
        autoDeploy: false,
        validateSignatures: true,
        publicBaseUrl: '',
        apiUrl: '',
        sessionStore: '',
        maxSessions: 0,
        credentials: { accountSid: 'AC' + '0'.repeat(32), authToken: 'fake-auth-token', webhookSigningSecret: '', token: TOKEN },
      },
      tab('pFlood', 'Flood'),
      node('telco-sms-start', 'floodStart', 'pFlood', { environment: 'envFlood' }, [[]]),
    ]);
  });
  after(async () => red?.close());

  it('answers 403 to every forged request and logs the first of each reason', async function () {
    const mark = red.logs.length;
    const statuses = [];
    for (let i = 0; i < 5; i++) {
      const res = await red.request('POST', INBOUND + TOKEN, form(i), { 'Content-Type': 'application/x-www-form-urlencoded', 'X-Twilio-Signature': 'forged' });
      statuses.push(res.status);
    }
    const unsigned = await red.request('POST', INBOUND + TOKEN, form(9), { 'Content-Type': 'application/x-www-form-urlencoded' });
    should(statuses).eql([403, 403, 403, 403, 403]);
    should(unsigned.status).equal(403);
    await new Promise((r) => setTimeout(r, 100));
    const lines = red.logs.slice(mark).filter((l) => l.includes('4020'));
    should(lines.filter((l) => l.includes('signature does not match')).length).equal(1, lines.join('\n'));
    should(lines.filter((l) => l.includes('no X-Twilio-Signature header')).length).equal(1, lines.join('\n'));
    const sessions = (await red.admin('GET', '/channel-sessions/sessions?environment=envFlood')).body;
    should(sessions).eql([], 'nothing was run');
  });
});
