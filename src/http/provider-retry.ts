import { channel } from 'node:diagnostics_channel';
import { BODY_TIMEOUT, HEADERS_TIMEOUT } from './http-request';

/**
 * When a call to a provider's REST API (Twilio, Slack's Web API) is tried again. Each provider's
 * transport (telco/twilio-http-client.ts, teamchat/slack-fetch.ts) sends one attempt at a time and
 * asks this module what to do next; the words of the failure it gives up with stay the provider's.
 *
 * Retried, whatever the method, at most RETRIES times:
 * - 429 and 5xx (but 501): Twilio's own guidance lists 429, 500, 502, 503 and 504 as safe to retry
 *   ("Handling Twilio REST API Error Codes and Implementing Retry Logic", Twilio support); Slack
 *   answers 429 with a Retry-After and asks clients to honour it. A 429 waits its Retry-After; one
 *   asking for more than MAX_RETRY_AFTER_MS is not waited for at all: a Task (and the conversation
 *   behind it) would hang that long, with nobody told why.
 * - a connection that failed, or was reset or closed before any answer: nearly always one that the
 *   provider never took (a stale keep-alive socket, a load balancer restarting). A reply lost there
 *   is worse than the rare second copy.
 * A request that must never reach the provider twice (a call create, which rings a person: its
 * transport asks afterUnsentFault) is tried again only when it certainly never left: a 429, or a
 * connection that could not be made (neverSent). A reset or a close on a connection already made
 * may come after the provider took the request, and so may a 5xx.
 * Never retried:
 * - no answer within the timeout: the request reached the provider, which may be posting or
 *   sending the message right now; sending it again could reach the person twice.
 * - any other answer (a 4xx refusal, a success whose body was cut off).
 * - a request whose body cannot be sent twice (a stream): the caller passes `retries` 0.
 *
 * A download (a GET that only reads a file a person sent: engine/files/download.ts) follows the
 * same rules for answers, and is also tried again after a timeout or a body cut off mid-way
 * (afterLostDownload): reading a file twice changes nothing at the provider, so the one reason not
 * to retry those (a second copy of a message) does not apply.
 */
export const RETRIES = 2;
export const BASE_DELAY_MS = 250;
export const MAX_RETRY_AFTER_MS = 10_000;

export function isRetriedStatus(status: number): boolean {
  return status === 429 || (status >= 500 && status <= 599 && status !== 501);
}

/** Connection faults before any answer (Node's socket errors). */
const CONNECTION_FAULTS: ReadonlySet<string> = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'EPIPE',
  'ETIMEDOUT',
  'EAI_AGAIN',
  'ENETDOWN',
  'ENETUNREACH',
  'EHOSTDOWN',
  'EHOSTUNREACH',
]);

export function errorCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

export function isConnectionFault(err: unknown): boolean {
  return CONNECTION_FAULTS.has(errorCode(err) ?? '');
}

/** Node's system calls that fail before a connection exists: finding the host's address, connecting. */
const BEFORE_CONNECTION: ReadonlySet<string> = new Set(['getaddrinfo', 'connect']);

/**
 * Whether a request certainly never reached the provider: the fault came while its host was looked
 * up or its connection made (with several addresses, every one failed so), before one byte of it
 * was written. A fault on a connection already made (a reset, "socket hang up", a broken pipe, a
 * timeout) may come after the provider took the request: a reused keep-alive socket the provider
 * closed before the write is the common case, but nothing tells it from a close after the write.
 */
export function neverSent(err: unknown): boolean {
  const { syscall, errors } = (err ?? {}) as { syscall?: unknown; errors?: unknown };
  if (typeof syscall === 'string') return BEFORE_CONNECTION.has(syscall);
  // Node's AggregateError when each of a host's addresses was tried (autoSelectFamily).
  return Array.isArray(errors) && errors.length > 0 && errors.every(neverSent);
}

export function isTimeout(err: unknown): boolean {
  const code = errorCode(err);
  return code === HEADERS_TIMEOUT || code === BODY_TIMEOUT;
}

/** A connection fault in words a flow author can act on; `provider` names who did not answer. */
export function connectionFaultReason(err: unknown, provider: string): string {
  const code = errorCode(err);
  if (code === 'ECONNRESET') return `the connection was reset before ${provider} answered`;
  if (code === 'ECONNREFUSED') return 'the connection was refused';
  if (code === 'ETIMEDOUT') return 'the connection timed out';
  return (err as Error)?.message || String(err);
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

/** Try again after this long. */
export interface Retry {
  retryInMs: number;
}

/** Why no further attempt is made after a retried status. */
export interface GiveUp {
  /** Set when the provider asked (Retry-After) to wait longer than a call may. */
  waitAsked?: { seconds: number; capSeconds: number };
}

/** After attempt `attempt` answered a retried status (isRetriedStatus): wait and retry, or give up. */
export function afterRetriedStatus(retryAfter: string | string[] | undefined, attempt: number, retries = RETRIES): Retry | GiveUp {
  const asked = retryAfterMs(retryAfter);
  if (asked !== undefined && asked > MAX_RETRY_AFTER_MS) {
    return { waitAsked: { seconds: Math.ceil(asked / 1000), capSeconds: MAX_RETRY_AFTER_MS / 1000 } };
  }
  if (attempt > retries) return {};
  return { retryInMs: asked ?? backoffMs(attempt) };
}

/** After attempt `attempt` failed before any answer: a Retry for a connection fault within the budget, else undefined. */
export function afterConnectionFault(err: unknown, attempt: number, retries = RETRIES): Retry | undefined {
  return isConnectionFault(err) && attempt <= retries ? { retryInMs: backoffMs(attempt) } : undefined;
}

/**
 * As afterConnectionFault, for a request that must not reach the provider twice: a Retry only for a
 * connection fault that came before the request could be sent (neverSent).
 */
export function afterUnsentFault(err: unknown, attempt: number, retries = RETRIES): Retry | undefined {
  return neverSent(err) ? afterConnectionFault(err, attempt, retries) : undefined;
}

/** After download attempt `attempt` lost its answer (a connection fault, a timeout, a body cut off): a Retry within the budget, else undefined. */
export function afterLostDownload(attempt: number, retries = RETRIES): Retry | undefined {
  return attempt <= retries ? { retryInMs: backoffMs(attempt) } : undefined;
}

/**
 * The diagnostics channel each provider call reports on (`{ provider, event }`, event `call`, `retry`
 * or `failure`); each runtime's metrics subscribe (engine/metrics.ts). A channel, not a counter
 * here: the clients are made far from any runtime, and this module keeps no state.
 */
export const PROVIDER_CALLS_CHANNEL = 'channel-sessions:provider-calls';
const providerCalls = channel(PROVIDER_CALLS_CHANNEL);

export interface ProviderCallEvent {
  provider: string;
  event: 'call' | 'retry' | 'failure';
}

function report(provider: string | undefined, event: ProviderCallEvent['event']): void {
  if (provider && providerCalls.hasSubscribers) providerCalls.publish({ provider, event } satisfies ProviderCallEvent);
}

/**
 * Runs `attempt(1)`, `attempt(2)` … until one gives an answer (or throws), sleeping as each asks in
 * between; `provider` names the call for the metrics (twilio, slack, download).
 */
export async function withRetries<T>(attempt: (n: number) => Promise<{ answer: T } | Retry>, provider?: string): Promise<T> {
  report(provider, 'call');
  for (let n = 1; ; n += 1) {
    let outcome: { answer: T } | Retry;
    try {
      outcome = await attempt(n);
    } catch (err) {
      report(provider, 'failure');
      throw err;
    }
    if ('answer' in outcome) return outcome.answer;
    report(provider, 'retry');
    await new Promise((resolve) => setTimeout(resolve, outcome.retryInMs));
  }
}
