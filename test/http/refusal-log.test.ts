import should from 'should';
import { NodeRed, eventually } from '../harness/node-red';
import { node, tab } from '../harness/flows';

const INBOUND = '/api/TelcoModule/Messaging/inbound/';
const TOKEN = 'floodTokenValue000000000001';
const CASE_TOKEN = 'caseTokenValue0000000000001';
const form = (i: number) =>
  new URLSearchParams({
    AccountSid: 'AC' + '0'.repeat(32),
    MessageSid: `SM${String(i).padStart(32, '0')}`,
    From: '+15559990001',
    To: '+15550001000',
    Body: 'forged',
  }).toString();

/** A flood of forged webhooks is refused every time but logged once per reason and minute. */
/** A messaging Environment that checks signatures, with no Messaging Service. */
function signedEnvironment(id: string, name: string, token: string) {
  return {
    id,
    type: 'telco-messaging-environment',
    name,
    messagingServiceSid: '',
    autoDeploy: false,
    validateSignatures: true,
    publicBaseUrl: '',
    apiUrl: '',
    sessionStore: '',
    maxSessions: 0,
    credentials: { accountSid: 'AC' + '0'.repeat(32), authToken: 'fake-auth-token', webhookSigningSecret: '', token },
  };
}

describe('refused webhooks in the log', function () {
  this.timeout(60000);
  let red: NodeRed;
  before(async function () {
    red = await NodeRed.start();
    await red.deploy([
      signedEnvironment('envFlood', 'Flood', TOKEN),
      signedEnvironment('envCase', 'Case', CASE_TOKEN),
      tab('pFlood', 'Flood'),
      node('telco-sms-start', 'floodStart', 'pFlood', { environment: 'envFlood' }, [[]]),
      node('telco-sms-start', 'caseStart', 'pFlood', { environment: 'envCase' }, [[]]),
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
    // The log reaches the test through the runtime's stdout pipe, which can trail the HTTP answers.
    const refusals = () => red.logs.slice(mark).filter((l) => l.includes('4020'));
    await eventually(() => refusals().length >= 2, 3000, 'both 4020 lines');
    await new Promise((r) => setTimeout(r, 100));
    const lines = refusals();
    should(lines.filter((l) => l.includes('signature does not match')).length).equal(1, lines.join('\n'));
    should(lines.filter((l) => l.includes('no X-Twilio-Signature header')).length).equal(1, lines.join('\n'));
    const sessions = (await red.admin('GET', '/channel-sessions/sessions?environment=envFlood')).body;
    should(sessions).eql([], 'nothing was run');
  });

  it('keeps the token out of the line when the path is spelled in another case (Express routes ignore case)', async function () {
    const mark = red.logs.length;
    for (const path of [`/api/telcomodule/messaging/INBOUND/${CASE_TOKEN}`, `/API/TELCOMODULE/MESSAGING/STATUS/${CASE_TOKEN}`]) {
      const res = await red.request('POST', path, form(1), { 'Content-Type': 'application/x-www-form-urlencoded', 'X-Twilio-Signature': 'forged' });
      should(res.status).equal(403, `${path} reached the route`);
    }
    const refusals = () => red.logs.slice(mark).filter((l) => l.includes('4020'));
    await eventually(() => refusals().length >= 2, 3000, 'both 4020 lines');
    const lines = refusals();
    should(lines.some((l) => l.includes('/INBOUND/case…'))).be.true(lines.join('\n'));
    should(lines.some((l) => l.includes('/STATUS/case…'))).be.true(lines.join('\n'));
    should(red.logs.slice(mark).filter((l) => l.includes(CASE_TOKEN))).eql([]);
  });
});

describe('the refusal log', function () {
  // The built package, as Node-RED loads it.
  const { RefusalLog } = require('../../../dist/http/refusal-log.js');

  /** Reports a reason three times at once, then once more after the quiet time; returns what was written. */
  async function flood(red: unknown): Promise<string[]> {
    const lines: string[] = [];
    const refusals = new RefusalLog(red, 30);
    for (let i = 0; i < 3; i++) refusals.report('env1:mismatch', (line: string) => lines.push(line), '4020 refused');
    await new Promise((r) => setTimeout(r, 50));
    refusals.report('env1:mismatch', (line: string) => lines.push(line), '4020 refused');
    return lines;
  }

  it("says how many refusals of a reason it left out, with the next line of that reason, in the runtime's language", async function () {
    // node-red-node-test-helper's RED._ answers the key: the English catalog is read.
    should(await flood({ _: (key: string) => key })).eql(['4020 refused', '4020 refused (2 more like it since the last report)']);
    const french = {
      _: (key: string, subs: { count: number }) =>
        key === '@channel-sessions/node-red/channel-sessions-core:runtime.log.refusalRepeats' ? `(${subs.count} autres depuis le dernier rapport)` : key,
    };
    should(await flood(french)).eql(['4020 refused', '4020 refused (2 autres depuis le dernier rapport)']);
  });
});
