import twilio from 'twilio';
import { create } from 'xmlbuilder2';
import type { NodeRed } from '../harness/node-red';

/** One TwiML verb as the provider reads it. */
export interface ParsedVerb {
  verb: string;
  attrs: Record<string, string>;
  text: string;
  children: ParsedVerb[];
}

export interface CallAnswer {
  status: number;
  text: string;
  contentType: string;
  verbs: ParsedVerb[];
}

/** The part of the DOM node xmlbuilder2 hands back that the parser reads. */
interface Element {
  nodeType: number;
  nodeName: string;
  textContent: string | null;
  childNodes: ArrayLike<Element>;
  attributes: ArrayLike<{ name: string; value: string }>;
}

/** TwiML parsed with a real XML parser: the verbs under `<Response>`, in order. */
export function parseTwiml(xml: string): ParsedVerb[] {
  const root = create(xml).root().node as unknown as Element;
  if (root.nodeName !== 'Response') throw new Error(`TwiML root is <${root.nodeName}>, not <Response>`);
  return elements(root).map(toVerb);
}

function elements(parent: Element): Element[] {
  return Array.from(parent.childNodes).filter((n): n is Element => n.nodeType === 1);
}

function toVerb(el: Element): ParsedVerb {
  const attrs: Record<string, string> = {};
  for (const a of Array.from(el.attributes)) attrs[a.name] = a.value;
  return { verb: el.nodeName, attrs, text: el.textContent ?? '', children: elements(el).map(toVerb) };
}

export const ACCOUNT_SID = 'AC' + '1'.repeat(32);
export const AUTH_TOKEN = 'fake-voice-auth-token-for-tests';

/**
 * Plays Twilio's side of a call: posts the form fields Twilio sends to a voice webhook, signed
 * the way Twilio signs (HMAC-SHA1 over the called URL and the sorted fields, via twilio's own
 * `getExpectedTwilioSignature`), and parses the TwiML answer.
 */
export class FakeTwilioCall {
  readonly callSid = 'CA' + Math.random().toString(16).slice(2).padEnd(32, '0').slice(0, 32);

  constructor(
    private readonly red: NodeRed,
    readonly options: { signingKey?: string; publicBaseUrl?: string; from?: string; to?: string } = {},
  ) {}

  baseParams(): Record<string, string> {
    return {
      AccountSid: ACCOUNT_SID,
      ApiVersion: '2010-04-01',
      CallSid: this.callSid,
      CallStatus: 'in-progress',
      Direction: 'inbound',
      From: this.options.from ?? '+14155550123',
      To: this.options.to ?? '+14155550999',
    };
  }

  start(token: string, extra: Record<string, string> = {}): Promise<CallAnswer> {
    return this.post(`/api/TelcoModule/Voice/start/${token}`, { ...this.baseParams(), CallStatus: 'ringing', ...extra });
  }

  next(environmentId: string, extra: Record<string, string> = {}, query = ''): Promise<CallAnswer> {
    return this.post(`/api/TelcoModule/Voice/next/${environmentId}${query}`, { ...this.baseParams(), ...extra });
  }

  /** Follows a URL from TwiML (Gather action, Redirect), resolved as Twilio does against the last URL. */
  follow(url: string, extra: Record<string, string> = {}): Promise<CallAnswer> {
    const path = url.startsWith('http') ? new URL(url).pathname + new URL(url).search : url;
    return this.post(path, { ...this.baseParams(), ...extra });
  }

  /** The URL Twilio would sign: the public one when the number's webhook points there. */
  signedUrl(path: string): string {
    return (this.options.publicBaseUrl ?? this.red.url('')).replace(/\/+$/, '') + path;
  }

  async post(path: string, params: Record<string, string>, headers: Record<string, string> = {}, signUrl = this.signedUrl(path)): Promise<CallAnswer> {
    const signature = twilio.getExpectedTwilioSignature(this.options.signingKey ?? AUTH_TOKEN, signUrl, params);
    const res = await fetch(this.red.url(path), {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'X-Twilio-Signature': signature, ...headers },
      body: new URLSearchParams(params).toString(),
    });
    const text = await res.text();
    const contentType = res.headers.get('content-type') ?? '';
    return { status: res.status, text, contentType, verbs: contentType.includes('xml') ? parseTwiml(text) : [] };
  }
}
