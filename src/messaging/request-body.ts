import { parseForm, readRawBody } from '../engine/http/raw-body';
import type { HttpRequest } from '../engine/red';

/**
 * Node-RED mounts its admin app (with JSON and form body parsers) at the root ahead of httpNode, so
 * a body may already be parsed when our route runs; the stream is then consumed and cannot be read
 * again. Use what the parser made in that case, else read the raw body ourselves.
 */
function alreadyParsed(req: HttpRequest): boolean {
  return (req as HttpRequest & { _body?: boolean })._body === true || req.readableEnded;
}

/** A webhook's form fields as strings (a repeated key keeps its last value, as `parseForm` does). */
export async function formFields(req: HttpRequest): Promise<Record<string, string>> {
  if (!alreadyParsed(req)) return parseForm(await readRawBody(req));
  const fields: Record<string, string> = {};
  const body = (req.body ?? {}) as Record<string, unknown>;
  for (const [key, value] of Object.entries(body)) {
    const last = Array.isArray(value) ? value[value.length - 1] : value;
    if (typeof last === 'string') fields[key] = last;
    else if (last !== undefined && last !== null && typeof last !== 'object') fields[key] = String(last);
  }
  return fields;
}

/** A JSON request body. */
export async function jsonBody(req: HttpRequest, limit: number): Promise<unknown> {
  if (alreadyParsed(req)) return req.body;
  const raw = (await readRawBody(req, limit)).toString('utf8');
  return JSON.parse(raw || '{}');
}
