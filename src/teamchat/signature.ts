import { createHmac, timingSafeEqual } from 'node:crypto';

/** Slack's replay window: requests signed more than 5 minutes from now (either way) are refused. */
export const REPLAY_WINDOW_SECONDS = 300;

/**
 * Slack's v0 request signature: `v0=` + hex HMAC-SHA256 of `v0:<timestamp>:<raw body>` with the
 * signing secret. It must be computed over the exact bytes received, before anything is parsed.
 */
export function isSignedBySlack(
  rawBody: Buffer,
  signature: string | undefined,
  timestamp: string | undefined,
  signingSecret: string | undefined,
  nowSeconds = Math.floor(Date.now() / 1000),
): boolean {
  if (!signingSecret || !signature || !timestamp || !/^\d+$/.test(timestamp)) return false;
  if (Math.abs(nowSeconds - Number(timestamp)) > REPLAY_WINDOW_SECONDS) return false;
  if (!signature.startsWith('v0=')) return false;
  const expected = createHmac('sha256', signingSecret)
    .update(Buffer.concat([Buffer.from(`v0:${timestamp}:`), rawBody]))
    .digest('hex');
  return sameText(signature.slice(3), expected);
}

/** Constant-time comparison of two secrets (signatures, bearer tokens). */
export function sameText(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
