/**
 * When a Twilio REST call is tried again (the `twilio` client's own `autoRetry` is not used: our
 * `httpClient` replaces the layer that has it, and it only knows 429).
 *
 * Retried, whatever the method, at most RETRIES times:
 * - 429 and 5xx (but 501): Twilio's own guidance lists 429, 500, 502, 503 and 504 as safe to retry
 *   ("Handling Twilio REST API Error Codes and Implementing Retry Logic", Twilio support). A 429
 *   waits its Retry-After; one asking for more than MAX_RETRY_AFTER_MS is not waited for at all.
 * - a connection that failed, or was reset or closed before any answer: nearly always one that
 *   Twilio never took (a stale keep-alive socket, a load balancer restarting). A reply lost there
 *   is worse than the rare second copy.
 * Never retried:
 * - no answer within the timeout: the request reached Twilio, which may be creating the message
 *   right now; sending it again could reach the user twice. The Task gets 4001 saying so.
 * - any other answer (a 4xx refusal, a success whose body was cut off).
 */
export const RETRIES = 2;
export const BASE_DELAY_MS = 250;
export const MAX_RETRY_AFTER_MS = 10_000;

export function isRetriedStatus(status: number): boolean {
  return status === 429 || (status >= 500 && status <= 599 && status !== 501);
}

/** Connection faults before any answer (node's socket errors and undici's own). */
const CONNECTION_FAULTS = new Set([
  'ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'EAI_AGAIN',
  'ENETDOWN', 'ENETUNREACH', 'EHOSTDOWN', 'EHOSTUNREACH',
  'UND_ERR_SOCKET', 'UND_ERR_CONNECT_TIMEOUT',
]);

export function errorCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

export function isConnectionFault(err: unknown): boolean {
  return CONNECTION_FAULTS.has(errorCode(err) ?? '');
}

export function isTimeout(err: unknown): boolean {
  const code = errorCode(err);
  return code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT';
}

/** Retry-After (delay-seconds or an HTTP date) in ms; undefined when absent or unreadable. */
export function retryAfterMs(header: string | string[] | undefined, now = Date.now()): number | undefined {
  const value = (Array.isArray(header) ? header[0] : header)?.trim();
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Number(value) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** Exponential (250 ms, 500 ms) with jitter, so clients refused together do not return together. */
export function backoffMs(retry: number): number {
  const full = BASE_DELAY_MS * 2 ** (retry - 1);
  return Math.round(full / 2 + Math.random() * (full / 2));
}
