// `node scripts/twiml-bench.cjs` (after `npm run build`): the CPU of one voice round's TwiML (a Say
// and a Gather with its prompt, as the bench's Process answers each `next` webhook) built three
// ways: twilio's builder (xmlbuilder 13, what renderTwiml used before), xmlbuilder2, and the
// package's renderTwiml (escaped text). Each prints its document first: all three must be the same.
const twilio = require('twilio');
const { create } = require('xmlbuilder2');
const { renderTwiml } = require('../dist/voice/verbs.js');

const speech = { text: 'You said: I would like to book a table for two & more <please>', voice: 'Polly.Joanna', language: 'en-US' };
const prompt = { text: 'What next?', voice: 'Polly.Joanna' };
const action = 'https://example.com/api/TelcoModule/Voice/next/tok?call=CA123&round=4';
const verbs = [
  { verb: 'say', speech },
  { verb: 'gather', action, language: 'en-US', prompt },
];
const gatherAttributes = { input: 'speech dtmf', action, method: 'POST', timeout: '5', speechTimeout: '5', actionOnEmptyResult: 'true', language: 'en-US' };

function withTwilio() {
  const response = new twilio.twiml.VoiceResponse();
  response.say({ voice: speech.voice, language: speech.language }, speech.text);
  const gather = response.gather({ ...gatherAttributes, input: ['speech', 'dtmf'], timeout: 5, speechTimeout: '5', actionOnEmptyResult: true });
  gather.say({ voice: prompt.voice }, prompt.text);
  return response.toString();
}

function withXmlbuilder2() {
  const response = create({ version: '1.0', encoding: 'UTF-8' }).ele('Response');
  response.ele('Say', { voice: speech.voice, language: speech.language }).txt(speech.text);
  response.ele('Gather', gatherAttributes).ele('Say', { voice: prompt.voice }).txt(prompt.text);
  return response.end();
}

const ways = [
  ['twilio (xmlbuilder 13)', withTwilio],
  ['xmlbuilder2', withXmlbuilder2],
  ['renderTwiml (text)', () => renderTwiml(verbs)],
];
for (const [name, build] of ways) console.log(`${name}: ${build()}`);
for (let round = 0; round < 3; round++) {
  for (const [name, build] of ways) {
    for (let i = 0; i < 2000; i++) build();
    const n = 20000;
    const start = process.cpuUsage();
    for (let i = 0; i < n; i++) build();
    const used = process.cpuUsage(start);
    console.log(`${name}: ${((used.user + used.system) / n).toFixed(2)} µs of CPU per document`);
  }
}
