import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import should from 'should';
import twilio from 'twilio';
import { makeTestCertificates } from '../harness/certificates';
import { node, tab } from '../harness/flows';
import { NodeRed } from '../harness/node-red';
import { voiceEnvironment } from '../harness/voice-flows';
import { AUTH_TOKEN, parseTwiml, type ParsedVerb } from '../fakes/twilio-voice-caller';
import { FakeConversationRelay } from '../fakes/conversation-relay';

/**
 * Node-RED serving HTTPS itself (its `https` setting), no proxy and no public base URL: the
 * provider calls https://, is answered a relay on wss:// and signs the upgrade over that URL.
 */
describe('AI agent when Node-RED serves HTTPS itself', function () {
  this.timeout(30000);
  let red: NodeRed;
  let ca: Buffer;
  const userDir = mkdtempSync(join(tmpdir(), 'cs-nodered-https-'));
  const env = voiceEnvironment('vagenttls');

  before(async function () {
    const files = makeTestCertificates(userDir);
    ca = readFileSync(files.ca);
    // The admin API is on https too, which the harness's fetch cannot trust: the flows are in place before the start.
    const { credentials, token: _token, ...environment } = env;
    const flows = [
      environment,
      tab('pTls', 'Agent over HTTPS'),
      node('telco-call-start', 'cstls', 'pTls', { environment: env.id }, [['agtls']]),
      node('telco-voice-agent', 'agtls', 'pTls', { resultVariable: 'agent' }, [[], [], ['saytls']]),
      node('telco-voice-agent-say', 'saytls', 'pTls', {}, [[], []]),
    ];
    writeFileSync(join(userDir, 'flows.json'), JSON.stringify(flows));
    writeFileSync(join(userDir, 'flows_cred.json'), JSON.stringify({ [env.id]: credentials }));
    red = await NodeRed.start({
      userDir,
      settings: { https: { key: readFileSync(files.key, 'utf8'), cert: readFileSync(files.cert, 'utf8') }, credentialSecret: false },
    });
  });
  after(async function () {
    await red?.close();
    rmSync(userDir, { recursive: true, force: true });
  });

  const origin = () => `https://127.0.0.1:${red.port}`;

  /** A voice webhook as the provider posts it to https://, signed over that URL. */
  function post(path: string, params: Record<string, string>): Promise<{ status: number; verbs: ParsedVerb[]; text: string }> {
    const body = new URLSearchParams(params).toString();
    const signature = twilio.getExpectedTwilioSignature(AUTH_TOKEN, origin() + path, params);
    return new Promise((resolve, reject) => {
      const req = request(origin() + path, {
        method: 'POST',
        ca,
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'X-Twilio-Signature': signature },
      });
      req.on('response', (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text, verbs: parseTwiml(text) }));
      });
      req.on('error', reject);
      req.end(body);
    });
  }

  it('answers a wss:// relay on the address called and accepts its upgrade signed over that URL', async function () {
    const callSid = 'CA' + 'e'.repeat(32);
    const answer = await post(`/api/TelcoModule/Voice/start/${env.token}`, {
      AccountSid: 'AC' + '1'.repeat(32),
      CallSid: callSid,
      CallStatus: 'ringing',
      Direction: 'inbound',
      From: '+14155550123',
      To: '+14155550999',
    });
    should(answer.status).equal(200, answer.text);
    const url = answer.verbs[0].children[0].attrs.url;
    should(url.startsWith(`wss://127.0.0.1:${red.port}/api/TelcoModule/Voice/relay/vagenttls?call=${callSid}&relay=`)).be.true(url);
    const relay = await FakeConversationRelay.connect(origin(), url, { ca });
    relay.prompt('over tls');
    should((await relay.frames(1))[0]).eql({ type: 'text', token: 'over tls', last: true });
    await relay.close();
  });
});
