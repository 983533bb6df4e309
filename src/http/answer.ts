import type { ServerResponse } from 'node:http';

/**
 * Writes a webhook's answer straight to Node's response. Express's `send` would also hash the body
 * for an ETag and negotiate freshness, which no provider uses, on every webhook of a burst.
 */
export function answer(res: ServerResponse, status: number, contentType: string, body: string): void {
  res.writeHead(status, { 'Content-Type': `${contentType}; charset=utf-8`, 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}
