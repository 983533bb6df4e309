import { STATUS_CODES } from 'node:http';
import type { FetchFunction } from '@slack/web-api';
import {
  afterConnectionFault,
  afterRetriedStatus,
  connectionFaultReason,
  errorCode,
  isRetriedStatus,
  isTimeout,
  RETRIES,
  withRetries,
  type Retry,
} from '../http/provider-retry';
import { ANSWER_TOO_LARGE, bodyBytes, request, type HttpAnswer } from '../http/http-request';
import { SlackAnswerCutOff, SlackAnswerTooLarge, SlackTimeout, SlackUnavailable, SlackUnreachable, type SlackFault } from './slack-faults';

type FetchResponse = Awaited<ReturnType<FetchFunction>>;
type FetchInit = Parameters<FetchFunction>[1] & {};

/** A Web API call that has not answered (or stalled mid-answer) for this long fails, and is not sent again. */
export const CALL_TIMEOUT_MS = 30000;

/** Where the Web API is when an Environment sets no `apiUrl`. */
export const SLACK_API = 'https://slack.com/api/';

/** Slack's file hosts and `apiUrl`'s origin: where files are downloaded with the bot token, and where Slack's upload URLs are. */
export function slackFileOrigins(apiUrl: string): string[] {
  const origins = ['https://files.slack.com', 'https://files.slack-gov.com'];
  if (apiUrl) {
    try {
      origins.push(new URL(apiUrl).origin);
    } catch {
      // an unusable apiUrl adds nothing
    }
  }
  return origins;
}

/**
 * The `fetch` the bot token's WebClient sends with (its documented `fetch` option), for every call
 * our package makes: chat.postMessage, chat.postEphemeral, auth.test, users.info and the
 * filesUploadV2 steps, the upload POST to the upload URL included.
 * - It retries what engine/provider-retry.ts says is safe to retry (429 within its Retry-After cap,
 *   5xx but 501, a connection lost before any answer; never a timeout or an answer cut off), so
 *   the WebClient is built with no retries of its own (slack-api.ts). What still fails is a
 *   SlackFault (slack-faults.ts) that says what happened; the WebClient hands it on as the
 *   `original` of its request error. A body that cannot be sent twice (a stream) gets one attempt.
 * - Everything goes through http/http-request.ts (Node's own http): Node's fetch costs several
 *   times the CPU per call (BENCHMARKS.md), and every reply of a busy bot pays it on the core that
 *   also acknowledges Slack's events. Multipart uploads too (see `sendable`).
 * - The bot token (the Authorization header) goes only to the Web API's origin (`apiUrl`, else
 *   Slack's) and Slack's file hosts (`slackFileOrigins`). filesUploadV2 posts each file to the
 *   `upload_url` files.getUploadURLExternal answered, with the client's headers, token included,
 *   wherever that URL points. Slack's own (files.slack.com) still get it, as the WebClient sends
 *   it; any other host gets the file without it (an upload URL is signed, and needs no token).
 *   Redirects are never followed.
 */
export function slackWebApiFetch(apiUrl: string, timeoutMs = CALL_TIMEOUT_MS): FetchFunction {
  const tokenOrigins = new Set([originOf(apiUrl || SLACK_API), ...slackFileOrigins(apiUrl)]);
  // A call to the API URL as given (every reply) is known by its start; any other is parsed.
  const apiStart = apiUrl ? (apiUrl.endsWith('/') ? apiUrl : `${apiUrl}/`) : SLACK_API;
  return async (url, init = {}) => {
    const { body, headers, retries } = await sendable(init);
    const target = String(url);
    const sent = target.startsWith(apiStart) || tokenOrigins.has(originOf(target)) ? headers : withoutAuthorization(headers);
    return withRetries((attempt) => tryOnce(url, { ...init, headers: sent }, body, timeoutMs, attempt, retries), 'slack');
  };
}

function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return '';
  }
}

function withoutAuthorization(headers: Record<string, string> | undefined): Record<string, string> | undefined {
  return headers && Object.fromEntries(Object.entries(headers).filter(([name]) => name.toLowerCase() !== 'authorization'));
}

/**
 * The body as it is sent, and how often it may be tried again. A FormData (an upload) is
 * encoded once, by the platform's own encoder, into bytes each attempt sends again. Anything else that is not a string
 * (a stream, from some later version of the WebClient) may not be readable twice: one attempt.
 */
async function sendable(init: FetchInit): Promise<{ body: string | Buffer | undefined; headers: Record<string, string> | undefined; retries: number }> {
  const { body, headers } = init;
  if (body === undefined || typeof body === 'string') return { body, headers, retries: RETRIES };
  if (body instanceof FormData) {
    const encoded = new Response(body);
    return {
      body: Buffer.from(await encoded.arrayBuffer()),
      headers: { ...headers, 'content-type': encoded.headers.get('content-type') ?? 'multipart/form-data' },
      retries: RETRIES,
    };
  }
  return { body: body as unknown as Buffer, headers, retries: 0 };
}

/** One try: the answer, or how long to wait before the next one; a SlackFault when there is none. */
async function tryOnce(
  url: string | URL,
  init: FetchInit,
  body: string | Buffer | undefined,
  timeoutMs: number,
  attempt: number,
  retries: number,
): Promise<{ answer: FetchResponse } | Retry> {
  let res: HttpAnswer;
  try {
    res = await request(String(url), {
      method: init.method ?? 'GET',
      headers: init.headers,
      body,
      signal: init.signal,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
  } catch (err) {
    if (init.signal?.aborted) throw err;
    if (isTimeout(err)) throw named(new SlackTimeout(timeoutMs), url);
    const retry = afterConnectionFault(err, attempt, retries);
    if (retry) return retry;
    throw named(new SlackUnreachable(connectionFaultReason(err, 'Slack'), errorCode(err), attempt), url);
  }
  let bytes: Buffer;
  try {
    bytes = await bodyBytes(res.body);
  } catch (err) {
    if (init.signal?.aborted) throw err;
    if (isTimeout(err)) throw named(new SlackTimeout(timeoutMs), url);
    // The answer began: Slack has the request, and a 200 means it was carried out. Not retried,
    // whether it broke off or ran past the size an API answer may have (read no further).
    if (!isRetriedStatus(res.statusCode)) {
      const fault =
        errorCode(err) === ANSWER_TOO_LARGE ? new SlackAnswerTooLarge(res.statusCode, attempt) : new SlackAnswerCutOff(res.statusCode, errorCode(err), attempt);
      throw named(fault, url);
    }
    bytes = Buffer.alloc(0);
  }
  if (!isRetriedStatus(res.statusCode)) return { answer: response(String(url), res.statusCode, res.headers, bytes) };
  const next = afterRetriedStatus(res.headers['retry-after'], attempt, retries);
  if ('retryInMs' in next) return next;
  throw named(new SlackUnavailable(res.statusCode, attempt, next.waitAsked), url);
}

/**
 * The fault's message names the call (the WebClient logs it as it hands the fault on): the Web API
 * method, the last part of its URL, or else the file upload (an upload URL).
 */
function named<T extends SlackFault>(fault: T, url: string | URL): T {
  const last = new URL(String(url)).pathname.split('/').pop() ?? '';
  fault.message = fault.describe(/^[a-z]+\.[A-Za-z.]+$/.test(last) ? last : 'the file upload');
  return fault;
}

/**
 * Socket Mode's `fetch` (apps.connections.open): one attempt, as that client reconnects on its
 * own schedule (socket-mode.ts). Strings through http/http-request.ts, anything else the standard
 * fetch; redirects never followed.
 */
export const slackFetch: FetchFunction = async (url, init = {}) => {
  if (init.body !== undefined && typeof init.body !== 'string') return fetch(url, { ...init, signal: init.signal ?? AbortSignal.timeout(CALL_TIMEOUT_MS) });
  const res = await request(String(url), {
    method: init.method ?? 'GET',
    headers: init.headers,
    body: init.body,
    signal: init.signal,
    headersTimeout: CALL_TIMEOUT_MS,
    bodyTimeout: CALL_TIMEOUT_MS,
  });
  const bytes = await bodyBytes(res.body);
  return response(String(url), res.statusCode, res.headers, bytes);
};

function response(url: string, status: number, raw: Record<string, string | string[] | undefined>, bytes: Buffer): FetchResponse {
  const headers = new Map<string, string>();
  for (const [name, value] of Object.entries(raw)) {
    if (value !== undefined) headers.set(name.toLowerCase(), Array.isArray(value) ? value.join(', ') : value);
  }
  return {
    ok: status >= 200 && status < 300,
    status,
    statusText: STATUS_CODES[status] ?? '',
    url,
    headers: { get: (name: string) => headers.get(name.toLowerCase()) ?? null, entries: () => headers.entries() },
    arrayBuffer: async () => bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer,
    text: async () => bytes.toString('utf8'),
    json: async () => JSON.parse(bytes.toString('utf8')),
  };
}
