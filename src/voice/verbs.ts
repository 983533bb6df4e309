import twilio from 'twilio';

type VoiceResponse = InstanceType<typeof twilio.twiml.VoiceResponse>;
type SayAttributes = Parameters<VoiceResponse['say']>[0] & object;
type GatherAttributes = NonNullable<Parameters<VoiceResponse['gather']>[0]>;
type RecordAttributes = NonNullable<Parameters<VoiceResponse['record']>[0]>;
type DialAttributes = Exclude<NonNullable<Parameters<VoiceResponse['dial']>[0]>, string>;

/** How a Say sounds: the Environment's Default Voice and the language in force. */
export interface Speech {
  text: string;
  voice?: string;
  language?: string;
}

/**
 * One voice instruction a Task produced for a call. Kept as plain data (not TwiML) so a round's
 * verbs can wait for the next webhook and be rendered once, by twilio's own builder.
 */
export type Verb =
  | { verb: 'say'; speech: Speech }
  | { verb: 'play'; url: string; loop: number }
  | { verb: 'gather'; prompt?: Speech; action: string; language?: string; speechModel?: string }
  | { verb: 'record'; action: string; maxLength: number; playBeep: boolean; trim: 'trim-silence' | 'do-not-trim'; transcribe: boolean }
  | { verb: 'dial'; number: string; timeout: number; record: string; callerId?: string }
  | { verb: 'pause'; length: number }
  | { verb: 'relay'; action: string; url: string; attributes: Record<string, string | boolean>; parameters: Array<{ name: string; value: string }> }
  | { verb: 'redirect'; url: string }
  | { verb: 'hangup' };

export const SILENCE_SECONDS = 5;

/**
 * TwiML for a list of verbs. twilio's builder escapes every text and attribute, so words a caller
 * said (placed in a prompt by a placeholder) stay words and can never become verbs.
 */
export function renderTwiml(verbs: Verb[]): string {
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
        timeout: SILENCE_SECONDS,
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
      // `url` first: a relative relay URL is made absolute by the webhook route (see withRelayOrigin).
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
