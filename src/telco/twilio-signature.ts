import { timingSafeEqual } from 'node:crypto';
import twilio from 'twilio';
import { calledUrl } from '../http/public-url';
import type { HttpRequest } from '../model/red';

/**
 * Whether `signature` is Twilio's over `url` and the form fields, with twilio's own functions.
 * The URL exactly as called is tried first: `validateRequest` starts with the URL without its
 * port, so a webhook URL carrying a port (Node-RED on :1880) would cost two HMACs every time.
 * Anything else goes to `validateRequest` and its port and encoding variants. `params` must be
 * every field received (`signedForm`), not the parse used afterwards.
 */
export function isSignedByTwilio(key: string, signature: string, url: string, params: Record<string, string | string[]>): boolean {
  const expected = Buffer.from(twilio.getExpectedTwilioSignature(key, url, params));
  const given = Buffer.from(signature);
  if (given.length === expected.length && timingSafeEqual(given, expected)) return true;
  return twilio.validateRequest(key, signature, url, params);
}

/** Whose webhooks are checked, and how: what a voice or messaging Environment holds. */
export interface WebhookSigning {
  /** Validate Signatures: off accepts every request unchecked. */
  validate: boolean;
  /** The Webhook Signing Secret when set, else the Auth Token; empty when neither is. */
  key: string;
  /** The Environment's public base URL, when Node-RED is behind a proxy. */
  publicBaseUrl: string;
}

export type SignatureCheck = { ok: true } | { ok: false; kind: 'no-key' | 'missing' | 'mismatch'; url: string };

/**
 * Whether a webhook really comes from the provider, for voice and messaging alike: the signature
 * over the URL the provider called (the public base URL when set) and every form field received
 * (`signedForm`), keyed by the Webhook Signing Secret or the Auth Token. Each module words the
 * refusal in its own log.
 */
export function checkWebhookSignature(
  signing: WebhookSigning,
  req: HttpRequest,
  params: Record<string, string | string[]>,
  httpNodeRoot: string | undefined,
): SignatureCheck {
  if (!signing.validate) return { ok: true };
  const url = calledUrl(req, signing.publicBaseUrl, httpNodeRoot);
  if (!signing.key) return { ok: false, kind: 'no-key', url };
  const header = req.headers['x-twilio-signature'];
  const signature = Array.isArray(header) ? header[0] : header;
  if (!signature) return { ok: false, kind: 'missing', url };
  if (isSignedByTwilio(signing.key, signature, url, params)) return { ok: true };
  return { ok: false, kind: 'mismatch', url };
}
