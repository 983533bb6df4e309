import { request as httpRequest, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';

/** An answer whose body is still to be read (or dropped): read it with bodyBytes, bodyText or discardBody. */
export interface HttpAnswer {
  statusCode: number;
  headers: IncomingHttpHeaders;
  body: IncomingMessage;
}

export interface HttpRequestOptions {
  method: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  signal?: AbortSignal;
  /** Longest wait for the answer's status and headers. */
  headersTimeout: number;
  /** Longest pause between two parts of the body (a body trickling in is cut off, not waited for). */
  bodyTimeout: number;
}

/** Codes of the two timeouts (provider-retry.ts tells them from connection faults). */
export const HEADERS_TIMEOUT = 'CS_HEADERS_TIMEOUT';
export const BODY_TIMEOUT = 'CS_BODY_TIMEOUT';
/** Code of the error bodyBytes throws when a body passes its limit (the connection is closed). */
export const ANSWER_TOO_LARGE = 'CS_ANSWER_TOO_LARGE';

/**
 * The most of a provider's API answer read into memory. Every answer the package reads (a message,
 * call or phone number resource, chat.postMessage, users.info, auth.test, an upload step) is a few
 * KB; far past that is no provider but a misbehaving proxy or emulator at `apiUrl`, whose body
 * the pause timeout alone would let stream in without end.
 */
export const API_ANSWER_MAX_BYTES = 4 * 1024 * 1024;

/**
 * One HTTP request through Node's own http/https, which keep connections alive on their global
 * agents (Node 19 and later): the provider clients (Twilio, Slack, file downloads) send this way.
 * Redirects are never followed. It replaces undici's `request`, whose current major needs a newer
 * Node than Node-RED's own minimum; measured in BENCHMARKS.md.
 */
export function request(url: string | URL, options: HttpRequestOptions): Promise<HttpAnswer> {
  const target = typeof url === 'string' ? new URL(url) : url;
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
  const headers: Record<string, string | number> = { ...options.headers };
  if (options.body !== undefined) headers['content-length'] = Buffer.byteLength(options.body);
  return new Promise((resolve, reject) => {
    const req = send(target, { method: options.method, headers, signal: options.signal });
    const headersTimer = setTimeout(() => req.destroy(timeout(HEADERS_TIMEOUT, 'no answer within the time allowed')), options.headersTimeout);
    // `on`, not `once`: a socket may fail again after the first error, and an unheard error crashes.
    req.on('error', (err) => {
      clearTimeout(headersTimer);
      reject(err);
    });
    req.once('response', (res) => {
      clearTimeout(headersTimer);
      // The socket's idle timer (the agent resets it when the socket is free again), not a 'data'
      // listener, which would start the body flowing before anyone reads it.
      res.setTimeout(options.bodyTimeout, () => res.destroy(timeout(BODY_TIMEOUT, 'the answer stalled mid-way')));
      // A body cut off before its reader starts is seen by the reader (the stream keeps its error).
      res.on('error', () => undefined);
      resolve({ statusCode: res.statusCode ?? 0, headers: res.headers, body: res });
    });
    req.end(options.body);
  });
}

/**
 * The whole body, up to `limit` bytes: a longer one (its declared length, or as soon as it passes
 * the limit) is not read on but closed, and fails with ANSWER_TOO_LARGE, so memory holds at most
 * the limit whatever the other side sends.
 */
export async function bodyBytes(body: IncomingMessage, limit = API_ANSWER_MAX_BYTES): Promise<Buffer> {
  const declared = Number(body.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) throw tooLarge(body, limit, declared);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += (chunk as Buffer).length;
    if (size > limit) throw tooLarge(body, limit);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

export async function bodyText(body: IncomingMessage, limit = API_ANSWER_MAX_BYTES): Promise<string> {
  return (await bodyBytes(body, limit)).toString('utf8');
}

/** "4 MB": a limit as a flow author reads it. */
export function megabytesText(bytes: number): string {
  return `${Math.round((bytes / 1048576) * 10) / 10} MB`;
}

/** Closes a body past its limit; the error says so, with the length the answer declared, if any. */
function tooLarge(body: IncomingMessage, limit: number, declared?: number): Error {
  body.destroy();
  const said = declared === undefined ? 'more' : `${declared} bytes`;
  return Object.assign(new Error(`the answer was ${said}, over the ${megabytesText(limit)} limit, and was not read`), { code: ANSWER_TOO_LARGE, declared });
}

/**
 * A body that is not wanted: a small one is read off so that its connection is kept for the next
 * request, a larger one (past `limit` bytes) closes it. Never throws: the connection may be gone.
 */
export async function discardBody(body: IncomingMessage, limit = 65536): Promise<void> {
  let size = 0;
  try {
    for await (const chunk of body) {
      size += (chunk as Buffer).length;
      if (size > limit) {
        body.destroy();
        return;
      }
    }
  } catch {
    // gone already; nothing to keep
  }
}

function timeout(code: string, message: string): Error {
  return Object.assign(new Error(message), { code });
}
