import { timingSafeEqual } from 'node:crypto';
import twilio from 'twilio';

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
