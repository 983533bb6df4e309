import type { TLSSocket } from 'node:tls';
import type { HttpRequest } from '../model/red';

/**
 * The URL the provider called, for its signature check: `publicBaseUrl` + httpNode
 * root + path + query when a public base URL is set, else the request's own absolute URL
 * (honouring X-Forwarded-Proto and X-Forwarded-Host from a reverse proxy): a route's and a
 * WebSocket upgrade's alike, so the relay URL an answer names is the one its upgrade is checked on.
 */
export function calledUrl(req: HttpRequest, publicBaseUrl: string | undefined, httpNodeRoot: string | undefined): string {
  const original = req.originalUrl ?? req.url ?? '/';
  if (publicBaseUrl) {
    const base = publicBaseUrl.replace(/\/+$/, '');
    const root = normalisedRoot(httpNodeRoot);
    // originalUrl already carries the httpNode root when Node-RED mounts it.
    const path = root !== '/' && original.startsWith(root) ? original : joinPath(root, original);
    return base + path;
  }
  const proto = firstValue(req.headers['x-forwarded-proto']) ?? ownProtocol(req);
  const host = firstValue(req.headers['x-forwarded-host']) ?? req.headers.host ?? '127.0.0.1';
  return `${proto}://${host}${original}`;
}

/** A route's full public URL, to show users and register with providers. */
export function publicRouteUrl(publicBaseUrl: string | undefined, httpNodeRoot: string | undefined, path: string): string | undefined {
  if (!publicBaseUrl) return undefined;
  return publicBaseUrl.replace(/\/+$/, '') + joinPath(normalisedRoot(httpNodeRoot), path);
}

/** A route's path under Node-RED's `httpNodeRoot` (what to log when there is no public base URL). */
export function rootedPath(httpNodeRoot: unknown, path: string): string {
  return joinPath(normalisedRoot(httpNodeRoot), path);
}

/** Node-RED's `httpNodeRoot` as `/` or `/path` (no trailing slash), whatever the setting's spelling. */
export function normalisedRoot(root: unknown): string {
  if (typeof root !== 'string' || !root || root === '/') return '/';
  return '/' + root.replace(/^\/+|\/+$/g, '');
}

function joinPath(root: string, path: string): string {
  return root === '/' ? path : root + (path.startsWith('/') ? path : `/${path}`);
}

/**
 * The scheme of the connection itself: Express's `req.protocol` on a route; a WebSocket upgrade is
 * a bare request without one, so its socket's TLS state, which is what Express reads there too.
 */
function ownProtocol(req: HttpRequest): string {
  if (req.protocol) return req.protocol;
  return (req.socket as Partial<TLSSocket> | undefined)?.encrypted ? 'https' : 'http';
}

function firstValue(header: string | string[] | undefined): string | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  return value ? value.split(',')[0].trim() : undefined;
}
