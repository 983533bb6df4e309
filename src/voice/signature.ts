import { calledUrl } from '../http/public-url';
import type { HttpRequest } from '../model/red';
import { isSignedByTwilio } from '../telco/twilio-signature';
import type { VoiceEnvironment } from './environment';

export type SignatureCheck = { ok: true } | { ok: false; kind: 'no-key' | 'missing' | 'mismatch'; reason: string };

/**
 * Whether a webhook really comes from the provider: twilio's own signature functions over the URL
 * the provider called (CONTRACT.md) and every form field received, keyed by the Webhook Signing
 * Secret when set, else the Auth Token. Validate Signatures off skips the check.
 */
export function checkSignature(
  env: VoiceEnvironment,
  req: HttpRequest,
  params: Record<string, string | string[]>,
  httpNodeRoot: string | undefined,
): SignatureCheck {
  if (!env.validateSignatures) return { ok: true };
  const key = env.credentials.webhookSigningSecret || env.credentials.authToken;
  if (!key) return { ok: false, kind: 'no-key', reason: 'no Auth Token or Webhook Signing Secret to check it with' };
  const header = req.headers['x-twilio-signature'];
  const signature = Array.isArray(header) ? header[0] : header;
  if (!signature) return { ok: false, kind: 'missing', reason: 'the X-Twilio-Signature header is missing' };
  const url = calledUrl(req, env.publicBaseUrl, httpNodeRoot);
  if (isSignedByTwilio(key, signature, url, params)) return { ok: true };
  return { ok: false, kind: 'mismatch', reason: `the signature does not match ${url}` };
}
