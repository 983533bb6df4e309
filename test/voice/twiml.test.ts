import should from 'should';
import twilio from 'twilio';
import type { Speech, Verb } from '../../src/voice/verbs';

// The built package, as Node-RED loads it.

const { renderTwiml } = require('../../../dist/voice/verbs.js') as { renderTwiml: (verbs: Verb[]) => string };

type VoiceResponse = InstanceType<typeof twilio.twiml.VoiceResponse>;
type SayAttributes = Parameters<VoiceResponse['say']>[0] & object;
type GatherAttributes = NonNullable<Parameters<VoiceResponse['gather']>[0]>;
type RecordAttributes = NonNullable<Parameters<VoiceResponse['record']>[0]>;
type DialAttributes = Exclude<NonNullable<Parameters<VoiceResponse['dial']>[0]>, string>;
const SILENCE_SECONDS = 5;

/** The reference: how the package built TwiML before, with twilio's builder (xmlbuilder 13), verb for verb. */
function withTwilio(verbs: Verb[]): string {
  const response = new twilio.twiml.VoiceResponse();
  for (const v of verbs) add(response, v);
  return response.toString();
}

function add(response: VoiceResponse, v: Verb): void {
  switch (v.verb) {
    case 'say':
      response.say(sayAttributes(v.speech), v.speech.text);
      return;
    case 'play':
      response.play({ loop: v.loop }, v.url);
      return;
    case 'gather': {
      const attrs: GatherAttributes = {
        input: ['speech', 'dtmf'],
        action: v.action,
        method: 'POST',
        timeout: v.timeout ?? SILENCE_SECONDS,
        speechTimeout: String(SILENCE_SECONDS),
        // Silence must reach the flow as 4009 rather than fall through and hang up.
        actionOnEmptyResult: true,
      };
      if (v.language) attrs.language = v.language as GatherAttributes['language'];
      // The enhanced model is phone_call with `enhanced`; the provider knows no phone_call_enhanced.
      if (v.speechModel === 'phone_call_enhanced') Object.assign(attrs, { speechModel: 'phone_call', enhanced: true });
      else if (v.speechModel) attrs.speechModel = v.speechModel;
      const gather = response.gather(attrs);
      if (v.prompt?.text) gather.say(sayAttributes(v.prompt), v.prompt.text);
      return;
    }
    case 'record': {
      const attrs: RecordAttributes = {
        action: v.action,
        method: 'POST',
        maxLength: v.maxLength,
        playBeep: v.playBeep,
        trim: v.trim,
      };
      if (v.transcribe) attrs.transcribe = true;
      response.record(attrs);
      return;
    }
    case 'dial': {
      const attrs: DialAttributes = { timeout: v.timeout, record: v.record as DialAttributes['record'] };
      if (v.callerId) attrs.callerId = v.callerId;
      response.dial(attrs, v.number);
      return;
    }
    case 'relay': {
      const relay = response.connect({ action: v.action, method: 'POST' }).conversationRelay({ url: v.url, ...v.attributes });
      for (const p of v.parameters) relay.parameter({ name: p.name, value: p.value });
      return;
    }
    case 'pause':
      response.pause({ length: v.length });
      return;
    case 'redirect':
      response.redirect({ method: 'POST' }, v.url);
      return;
    case 'hangup':
      response.hangup();
      return;
  }
}

function sayAttributes(speech: Speech): SayAttributes {
  const attrs: SayAttributes = {};
  if (speech.voice) attrs.voice = speech.voice as SayAttributes['voice'];
  if (speech.language) attrs.language = speech.language as SayAttributes['language'];
  return attrs;
}

/** Texts with everything XML escapes, entities that look escaped already, and characters beyond ASCII. */
const PIECES = ['a', 'Zoë', ' ', '&', '&amp;', '<b>', '>', '"', "'", '\t', '\n', '\r', ']]>', '☃', '😀', 'Paris', '{{vars.x}}', '%20', '=', '?'];

function randomText(random: () => number, max = 8): string {
  let out = '';
  for (let i = Math.floor(random() * max); i > 0; i--) out += PIECES[Math.floor(random() * PIECES.length)];
  return out;
}

function randomSpeech(random: () => number): Speech {
  return {
    text: randomText(random),
    ...(random() < 0.5 ? { voice: random() < 0.5 ? 'Polly.Joanna' : randomText(random, 3) } : {}),
    ...(random() < 0.5 ? { language: random() < 0.5 ? 'en-US' : randomText(random, 3) } : {}),
  };
}

function randomVerb(random: () => number): Verb {
  const url = `https://example.com/next/${randomText(random, 4)}?a=1&b=${randomText(random, 3)}`;
  switch (Math.floor(random() * 9)) {
    case 8:
      return {
        verb: 'relay',
        action: url,
        url: `wss://example.com/relay/${randomText(random, 3)}`,
        attributes: { welcomeGreeting: randomText(random), interruptible: random() < 0.5, ...(random() < 0.5 ? { language: 'en-US' } : {}) },
        parameters: Array.from({ length: Math.floor(random() * 3) }, (_, k) => ({ name: `p${k}`, value: randomText(random, 4) })),
      };
    case 0:
      return { verb: 'say', speech: randomSpeech(random) };
    case 1:
      return { verb: 'play', url, loop: Math.floor(random() * 3) };
    case 2: {
      const models = [undefined, 'phone_call', 'phone_call_enhanced', 'numbers_and_commands'];
      return {
        verb: 'gather',
        action: url,
        ...(random() < 0.7 ? { prompt: randomSpeech(random) } : {}),
        ...(random() < 0.5 ? { language: 'fr-FR' } : {}),
        ...(random() < 0.6 ? { speechModel: models[Math.floor(random() * models.length)] } : {}),
        ...(random() < 0.3 ? { timeout: 1 + Math.floor(random() * 600) } : {}),
      };
    }
    case 3:
      return {
        verb: 'record',
        action: url,
        maxLength: Math.floor(random() * 600),
        playBeep: random() < 0.5,
        trim: random() < 0.5 ? 'trim-silence' : 'do-not-trim',
        transcribe: random() < 0.5,
      };
    case 4:
      return {
        verb: 'dial',
        number: `+1555${Math.floor(random() * 1e7)}`,
        timeout: 30,
        record: random() < 0.5 ? 'do-not-record' : '',
        ...(random() < 0.5 ? { callerId: '+15550001111' } : {}),
      };
    case 5:
      return { verb: 'pause', length: Math.floor(random() * 5) };
    case 6:
      return { verb: 'redirect', url };
    default:
      return { verb: 'hangup' };
  }
}

/** A small seeded generator, so a failure can be replayed. */
function seeded(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/**
 * TwiML is written as escaped text (renderTwiml) instead of through twilio's builder: for every
 * verb and every text the provider must receive the same bytes the builder gave.
 */
describe('TwiML as renderTwiml writes it', function () {
  it('is byte for byte what twilio’s builder wrote, for 5,000 random rounds of every verb and awkward texts', function () {
    for (let seed = 1; seed <= 5000; seed++) {
      const random = seeded(seed);
      const verbs = Array.from({ length: Math.floor(random() * 5) }, () => randomVerb(random));
      should(renderTwiml(verbs)).equal(withTwilio(verbs), `seed ${seed}: ${JSON.stringify(verbs)}`);
    }
  });

  it('an empty round, a Say without text, and a Gather without a prompt close themselves as the builder wrote them', function () {
    should(renderTwiml([])).equal('<?xml version="1.0" encoding="UTF-8"?><Response/>');
    should(
      renderTwiml([
        { verb: 'say', speech: { text: '' } },
        { verb: 'gather', action: 'https://x/a' },
      ]),
    ).equal(
      '<?xml version="1.0" encoding="UTF-8"?><Response><Say/><Gather input="speech dtmf" action="https://x/a" method="POST" timeout="5" speechTimeout="5" actionOnEmptyResult="true"/></Response>',
    );
  });

  it('leaves out characters XML cannot carry (the builder threw on them), so what a caller said never breaks the round', function () {
    const said = 'a\u0001b\u0000c\uFFFEd\uD800e';
    should(() => withTwilio([{ verb: 'say', speech: { text: said } }])).throw(/Invalid character/);
    should(renderTwiml([{ verb: 'say', speech: { text: said, voice: 'x\u0007y' } }])).equal(
      '<?xml version="1.0" encoding="UTF-8"?><Response><Say voice="xy">abcde</Say></Response>',
    );
    // A pair of surrogates is one character (an emoji) and stays.
    should(renderTwiml([{ verb: 'say', speech: { text: '😀' } }])).equal('<?xml version="1.0" encoding="UTF-8"?><Response><Say>😀</Say></Response>');
  });
});
