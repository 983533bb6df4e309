import { STATUS_CODES } from 'node:http';
import type { FetchFunction } from '@slack/web-api';
import { request } from 'undici';

type FetchResponse = Awaited<ReturnType<FetchFunction>>;

/** A Web API call that has not answered (or stalled mid-answer) for this long fails and is retried. */
const CALL_TIMEOUT_MS = 30000;

/**
 * The `fetch` the WebClient sends with (its documented `fetch` option). Node's own fetch costs
 * several times the CPU of undici's `request` per call (BENCHMARKS.md), and every reply of a busy
 * bot pays it on the core that also acknowledges Slack's events. So Web API calls, whose bodies are
 * strings, go through `request`; anything else (a multipart upload) goes to the standard fetch.
 * Redirects are never followed, so the token only ever reaches the configured API URL.
 */
export const slackFetch: FetchFunction = async (url, init = {}) => {
  if (init.body !== undefined && typeof init.body !== 'string') return fetch(url, { ...init, signal: init.signal ?? AbortSignal.timeout(CALL_TIMEOUT_MS) });
  const res = await request(url, {
    method: (init.method ?? 'GET') as 'GET',
    headers: init.headers,
    body: init.body,
    signal: init.signal,
    headersTimeout: CALL_TIMEOUT_MS,
    bodyTimeout: CALL_TIMEOUT_MS,
  });
  const bytes = Buffer.from(await res.body.arrayBuffer());
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
