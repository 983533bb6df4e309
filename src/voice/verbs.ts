/** How a Say sounds: the Environment's Default Voice and the language in force. */
export interface Speech {
  text: string;
  voice?: string;
  language?: string;
}

/**
 * One voice instruction a Task produced for a call. Kept as plain data (not TwiML) so a round's
 * verbs can wait for the next webhook and be rendered once (renderTwiml).
 */
export type Verb =
  | { verb: 'say'; speech: Speech }
  | { verb: 'play'; url: string; loop: number }
  | { verb: 'gather'; prompt?: Speech; action: string; language?: string; speechModel?: string; timeout?: number }
  | { verb: 'record'; action: string; maxLength: number; playBeep: boolean; trim: 'trim-silence' | 'do-not-trim'; transcribe: boolean }
  | { verb: 'dial'; number: string; timeout: number; record: string; callerId?: string }
  | { verb: 'pause'; length: number }
  | { verb: 'relay'; action: string; url: string; attributes: Record<string, string | boolean>; parameters: Array<{ name: string; value: string }> }
  | { verb: 'redirect'; url: string }
  | { verb: 'hangup' };

export const SILENCE_SECONDS = 5;

/**
 * TwiML for a list of verbs, written as text: the same bytes twilio's builder (xmlbuilder 13) gives
 * for them, at about a tenth of its CPU (that builder makes a whole XML document for every element
 * it adds, 30-40 µs a round; scripts/twiml-bench.cjs). Every text and attribute is escaped, so words
 * a caller said (placed in a prompt by a placeholder) stay words and can never become verbs;
 * characters XML 1.0 cannot carry are left out (the builder threw on them in texts, and let them
 * through attributes unescaped).
 */
export function renderTwiml(verbs: Verb[]): string {
  let body = '';
  for (const v of verbs) body += verbXml(v);
  return `<?xml version="1.0" encoding="UTF-8"?>${element('Response', [], body)}`;
}

type Attribute = [name: string, value: string | number | boolean | undefined];

function verbXml(v: Verb): string {
  switch (v.verb) {
    case 'say':
      return sayXml(v.speech);
    case 'play':
      return element('Play', [['loop', v.loop]], text(v.url));
    case 'gather': {
      const attrs: Attribute[] = [
        ['input', 'speech dtmf'],
        ['action', v.action],
        ['method', 'POST'],
        // Counted from when the prompt has been said: how long the caller has to begin answering.
        ['timeout', v.timeout ?? SILENCE_SECONDS],
        ['speechTimeout', SILENCE_SECONDS],
        // Silence must reach the flow (4009, or an InputTask's no reply) rather than fall through and hang up.
        ['actionOnEmptyResult', true],
      ];
      if (v.language) attrs.push(['language', v.language]);
      // The enhanced model is phone_call with `enhanced`; the provider knows no phone_call_enhanced.
      if (v.speechModel === 'phone_call_enhanced') attrs.push(['speechModel', 'phone_call'], ['enhanced', true]);
      else if (v.speechModel) attrs.push(['speechModel', v.speechModel]);
      return element('Gather', attrs, v.prompt?.text ? sayXml(v.prompt) : '');
    }
    case 'record': {
      const attrs: Attribute[] = [
        ['action', v.action],
        ['method', 'POST'],
        ['maxLength', v.maxLength],
        ['playBeep', v.playBeep],
        ['trim', v.trim],
      ];
      if (v.transcribe) attrs.push(['transcribe', true]);
      return element('Record', attrs);
    }
    case 'dial':
      return element(
        'Dial',
        [
          ['timeout', v.timeout],
          ['record', v.record],
          ['callerId', v.callerId || undefined],
        ],
        text(v.number),
      );
    case 'relay': {
      // `url` first: a relative relay URL is made absolute by the webhook route (see withRelayOrigin).
      const attrs: Attribute[] = Object.entries({ url: v.url, ...v.attributes });
      const parameters = v.parameters
        .map((p) =>
          element('Parameter', [
            ['name', p.name],
            ['value', p.value],
          ]),
        )
        .join('');
      return element(
        'Connect',
        [
          ['action', v.action],
          ['method', 'POST'],
        ],
        element('ConversationRelay', attrs, parameters),
      );
    }
    case 'pause':
      return element('Pause', [['length', v.length]]);
    case 'redirect':
      return element('Redirect', [['method', 'POST']], text(v.url));
    case 'hangup':
      return element('Hangup', []);
  }
}

function sayXml(speech: Speech): string {
  return element(
    'Say',
    [
      ['voice', speech.voice || undefined],
      ['language', speech.language || undefined],
    ],
    text(speech.text),
  );
}

/** An element with its attributes in order (those undefined left out); empty, it closes itself, as the builder writes it. */
function element(name: string, attrs: Attribute[], inner = ''): string {
  let open = `<${name}`;
  for (const [key, value] of attrs) if (value !== undefined) open += ` ${key}="${attribute(String(value))}"`;
  return inner ? `${open}>${inner}</${name}>` : `${open}/>`;
}

/** Characters XML 1.0 cannot carry: C0 controls but tab, newline and return; U+FFFE, U+FFFF; unpaired surrogates. */
// eslint-disable-next-line no-control-regex -- these control characters are what it finds
const ILLEGAL = /[\0-\x08\x0B\f\x0E-\x1F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
const TEXT_SPECIAL = /[&<>\r]/;
const ATTRIBUTE_SPECIAL = /[&<"\t\n\r]/;

function legal(value: string): string {
  ILLEGAL.lastIndex = 0;
  return ILLEGAL.test(value) ? value.replace(ILLEGAL, '') : value;
}

/** Text content, escaped as the builder escapes it. */
function text(value: string): string {
  const s = legal(String(value ?? ''));
  if (!TEXT_SPECIAL.test(s)) return s;
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/\r/g, '&#xD;');
}

/** An attribute value, escaped as the builder escapes it. */
function attribute(value: string): string {
  const s = legal(value);
  if (!ATTRIBUTE_SPECIAL.test(s)) return s;
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/"/g, '&quot;').replace(/\t/g, '&#x9;').replace(/\n/g, '&#xA;').replace(/\r/g, '&#xD;');
}
