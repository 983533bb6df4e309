import type { IncomingMessage } from 'node:http';
import type { RED } from '../model/red';
import { moveLastLayer, routerStack, type ExpressApp, type Layer } from './express-stack';
import { normalisedRoot } from './public-url';

export class BodyTooLarge extends Error {}

/** Webhook bodies bigger than this are refused (Slack and Twilio send a few KB). */
export const WEBHOOK_BODY_LIMIT = 1024 * 1024;

type CapturedRequest = IncomingMessage & { rawBody?: Buffer; rawBodyError?: Error; _body?: boolean; originalUrl?: string };

/**
 * Reads the raw request body: signature checks need the exact bytes the provider signed, so
 * webhook routes use no body parser. When Node-RED's admin app shares the httpNode root (the
 * default, both `/`), its JSON and form parsers would consume the body first; the capture layer
 * installed by `captureRawBodies` keeps the bytes for us before they do.
 */
export function readRawBody(req: IncomingMessage, limit = WEBHOOK_BODY_LIMIT): Promise<Buffer> {
  const captured = req as CapturedRequest;
  if (captured.rawBodyError) return Promise.reject(captured.rawBodyError);
  if (captured.rawBody) return Promise.resolve(captured.rawBody);
  if (captured._body || captured.readableEnded) {
    return Promise.reject(new Error('the request body was already read by another middleware (httpNodeMiddleware?), so its signature cannot be checked'));
  }
  return collect(req, limit);
}

function collect(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let failed = false;
    req.on('data', (chunk: Buffer) => {
      if (failed) return;
      size += chunk.length;
      if (size > limit) {
        failed = true;
        reject(new BodyTooLarge(`request body over ${limit} bytes`));
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (!failed) resolve(Buffer.concat(chunks));
    });
    req.on('error', reject);
  });
}

/**
 * A form body (`application/x-www-form-urlencoded`) as a plain object for use; repeated keys keep
 * the last value. `__proto__` is left out, so no field can reach an object's prototype.
 */
export function parseForm(raw: Buffer): Record<string, string> {
  const params: Record<string, string> = {};
  for (const [key, value] of new URLSearchParams(raw.toString('utf8'))) {
    if (key !== '__proto__') params[key] = value;
  }
  return params;
}

/**
 * Every field of a form body exactly as received, for a provider's signature check: the provider
 * signed them all (`__proto__` included, and each value of a repeated key), so none may be dropped.
 * A null-prototype object keeps `__proto__` as an ordinary key; it is only read, never spread.
 */
export function signedForm(raw: Buffer): Record<string, string | string[]> {
  const fields: Record<string, string | string[]> = Object.create(null);
  for (const [key, value] of new URLSearchParams(raw.toString('utf8'))) {
    const prior = fields[key];
    fields[key] = prior === undefined ? value : Array.isArray(prior) ? [...prior, value] : [prior, value];
  }
  return fields;
}

/** The paths whose bodies are kept, by the editor app the capture layer was put in (one per runtime). */
const captured = new WeakMap<object, Set<string>>();

/**
 * Keeps the raw body of requests under the given httpNode paths (e.g. `/TeamChat/`) before the
 * admin app's body parsers run. Express skips its parsers once `req._body` is set.
 */
export function captureRawBodies(red: RED, prefix: string): void {
  // Nodes get the runtime's admin sub-app; the parsers sit in the editor's app it is mounted in
  // (Express records `parent` on mount).
  let admin = red.httpAdmin as unknown as ExpressApp | undefined;
  let parserAt = -1;
  let stack: Layer[] | undefined;
  while (admin) {
    stack = routerStack(admin);
    parserAt = stack ? stack.findIndex((layer) => layer.name === 'jsonParser' || layer.name === 'urlencodedParser') : -1;
    if (parserAt >= 0) break;
    admin = admin.parent;
  }
  if (!admin || !stack || parserAt < 0) return;
  const known = captured.get(admin);
  if (known) {
    known.add(prefix);
    return;
  }
  const prefixes = new Set([prefix]);
  captured.set(admin, prefixes);
  const nodeRoot = normalisedRoot(red.settings.httpNodeRoot);
  admin.use(function channelSessionsRawBody(req: CapturedRequest, _res: unknown, next: () => void) {
    const path = (req.originalUrl ?? req.url ?? '').split('?')[0];
    const relative = nodeRoot === '/' ? path : path.startsWith(nodeRoot) ? path.slice(nodeRoot.length) : '';
    if (!relative || ![...prefixes].some((p) => relative.startsWith(p))) {
      next();
      return;
    }
    req._body = true;
    collect(req, WEBHOOK_BODY_LIMIT)
      .then((raw) => {
        req.rawBody = raw;
      })
      .catch((err: Error) => {
        req.rawBodyError = err;
      })
      .finally(next);
  });
  moveLastLayer(stack, parserAt);
}
