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

/** The whole body. */
export async function bodyBytes(body: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

export async function bodyText(body: IncomingMessage): Promise<string> {
  return (await bodyBytes(body)).toString('utf8');
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
