import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { NodeRed } from './harness/node-red';
import { node, tab } from './harness/flows';

const INBOUND = '/api/TelcoModule/Messaging/inbound/';
const TOKEN = 'floodTokenValue000000000001';
const form = (i: number) => new URLSearchParams({
  AccountSid: 'AC' + '0'.repeat(32), MessageSid: `SM${String(i).padStart(32, '0')}`, From: '+15559990001', To: '+15550001000', Body: 'forged',
}).toString();

/** A flood of forged webhooks is refused every time but logged once per reason and minute. */
describe('refused webhooks in the log', { timeout: 60000 }, () => {
  let red: NodeRed;
  before(async () => {
    red = await NodeRed.start();
    await red.deploy([
      {
        id: 'envFlood', type: 'telco-messaging-environment', name: 'Flood', messagingServiceSid: '', autoDeploy: false,
        validateSignatures: true, publicBaseUrl: '', apiUrl: '', sessionStore: '', maxSessions: 0,
        credentials: { accountSid: 'AC' + '0'.repeat(32), authToken: 'fake-auth-token', webhookSigningSecret: '', token: TOKEN },
      },
      tab('pFlood', 'Flood'),
      node('telco-sms-start', 'floodStart', 'pFlood', { environment: 'envFlood' }, [[]]),
    ]);
  });
  after(async () => red?.close());

  it('answers 403 to every forged request and logs the first of each reason', async () => {
    const mark = red.logs.length;
    const statuses = [];
    for (let i = 0; i < 5; i++) {
      const res = await red.request('POST', INBOUND + TOKEN, form(i), { 'Content-Type': 'application/x-www-form-urlencoded', 'X-Twilio-Signature': 'forged' });
      statuses.push(res.status);
    }
    const unsigned = await red.request('POST', INBOUND + TOKEN, form(9), { 'Content-Type': 'application/x-www-form-urlencoded' });
    assert.deepEqual(statuses, [403, 403, 403, 403, 403]);
    assert.equal(unsigned.status, 403);
    await new Promise((r) => setTimeout(r, 100));
    const lines = red.logs.slice(mark).filter((l) => l.includes('4020'));
    assert.equal(lines.filter((l) => l.includes('signature does not match')).length, 1, lines.join('\n'));
    assert.equal(lines.filter((l) => l.includes('no X-Twilio-Signature header')).length, 1, lines.join('\n'));
    const sessions = (await red.admin('GET', '/channel-sessions/sessions?environment=envFlood')).body;
    assert.deepEqual(sessions, [], 'nothing was run');
  });
});
