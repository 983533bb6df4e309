import should from 'should';
import twilio from 'twilio';
import { chain, tab, uid } from '../harness/flows';
import { NodeRed, eventually } from '../harness/node-red';
import { FakeTwilioMessagingApi } from '../fakes/twilio-messaging-api';
import { ACCOUNT_SID, AUTH_TOKEN, INBOUND, inboundForm, messagingEnvironment, sessionWhen } from '../fakes/twilio-messaging-webhooks';
import { AUTH_TOKEN as VOICE_AUTH_TOKEN, parseTwiml } from '../fakes/twilio-voice-caller';
import { sessionOfCall, voiceEnvironment } from '../harness/voice-flows';

const OURS = '+15550001000';

/** Form fields as ordered pairs: a plain object literal cannot even hold a `__proto__` key. */
type Pairs = Array<[string, string]>;

/** What Twilio signs: every field, `__proto__` included (twilio's own function, over a null-prototype object). */
function twilioSignature(key: string, url: string, pairs: Pairs): string {
  const fields: Record<string, string> = Object.create(null);
  for (const [k, v] of pairs) fields[k] = v;
  return twilio.getExpectedTwilioSignature(key, url, fields);
}

async function postSigned(red: NodeRed, path: string, pairs: Pairs, signature: string) {
  return red.request('POST', path, new URLSearchParams(pairs).toString(), {
    'Content-Type': 'application/x-www-form-urlencoded',
    'X-Twilio-Signature': signature,
  });
}

/**
 * Twilio signs every form field it sends, whatever its name. A field named `__proto__` (or
 * `constructor`) must count for the signature yet never reach an object's prototype.
 */
describe('Twilio webhooks with form keys such as __proto__', function () {
  let red: NodeRed;
  let fake: FakeTwilioMessagingApi;
  const token = 'tok-keys-' + uid();
  const voice = voiceEnvironment('vkeys');

  before(async function () {
    fake = await FakeTwilioMessagingApi.start(ACCOUNT_SID, AUTH_TOKEN);
    red = await NodeRed.start();
    await red.deploy([
      messagingEnvironment('envKeys', token, fake, red),
      voice,
      tab('pKeys', 'Keys'),
      ...chain('pKeys', [
        ['telco-sms-start', 'kStart', { environment: 'envKeys' }],
        ['input-task', 'kIn', { prompt: 'you wrote {message.text}', resultVariable: 'r' }],
        ['end-task', 'kEnd'],
      ]),
      tab('pVoiceKeys', 'Voice keys'),
      ...chain('pVoiceKeys', [
        ['telco-call-start', 'vkStart', { environment: 'vkeys' }],
        ['output-task', 'vkSay', { text: 'Hello {call.from}' }],
        ['end-task', 'vkEnd'],
      ]),
    ]);
  });
  after(async function () {
    await red?.close();
    await fake?.close();
  });

  it('messaging: a validly signed message with __proto__ and constructor fields is accepted and answered', async function () {
    const user = '+15551230001';
    const pairs: Pairs = [...Object.entries(inboundForm(user, OURS, 'proto')), ['__proto__', 'x'], ['constructor', 'y']];
    const path = INBOUND + token;
    const res = await postSigned(red, path, pairs, twilioSignature(AUTH_TOKEN, red.url(path), pairs));
    res.status.should.equal(200);
    const session = await sessionWhen(red, 'envKeys', user, OURS, (s) => s.waitingAt?.nodeId === 'kIn', 'the Session');
    session.vars.message.text.should.equal('proto');
    should(Object.keys(session.vars)).not.containEql('__proto__');
    await eventually(() => fake.messagesTo(user).some((m) => m.Body === 'you wrote proto'), 5000, 'the prompt');
  });

  it('messaging: the same message signed without its __proto__ field is refused 403', async function () {
    const user = '+15551230002';
    const form = inboundForm(user, OURS, 'forged');
    const pairs: Pairs = [...Object.entries(form), ['__proto__', 'x']];
    const path = INBOUND + token;
    const withoutProto = twilio.getExpectedTwilioSignature(AUTH_TOKEN, red.url(path), form);
    (await postSigned(red, path, pairs, withoutProto)).status.should.equal(403);
    fake.messagesTo(user).should.have.length(0);
  });

  it('voice: a validly signed call with a __proto__ field is answered with TwiML', async function () {
    const callSid = 'CA' + uid().padEnd(32, '0').slice(0, 32);
    const pairs: Pairs = [
      ['AccountSid', ACCOUNT_SID],
      ['CallSid', callSid],
      ['CallStatus', 'ringing'],
      ['Direction', 'inbound'],
      ['From', '+14155550123'],
      ['To', '+14155550999'],
      ['__proto__', 'x'],
    ];
    const path = `/api/TelcoModule/Voice/start/${voice.token}`;
    const res = await postSigned(red, path, pairs, twilioSignature(VOICE_AUTH_TOKEN, red.url(path), pairs));
    res.status.should.equal(200, res.text);
    parseTwiml(res.text)
      .map((v) => [v.verb, v.text])
      .should.eql([
        ['Say', 'Hello +14155550123'],
        ['Hangup', ''],
      ]);
    (await sessionOfCall(red, callSid)).state.should.equal('completed');
  });
});
