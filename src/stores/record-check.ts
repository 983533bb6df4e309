import type { SessionRecord } from '../model/session';

const STATES: ReadonlySet<string> = new Set(['running', 'waiting', 'completed', 'ended']);

/**
 * A stored Session as text, checked before the engine trusts it: a record missing a field would
 * otherwise wedge its conversation (every later message acknowledged and dropped).
 */
export function readSessionRecord(text: string): { session: SessionRecord } | { problem: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { problem: `not JSON: ${(err as Error).message}` };
  }
  const problem = sessionProblem(value);
  return problem ? { problem } : { session: value as SessionRecord };
}

/** What is wrong with a value that should be a Session record, or undefined when nothing is. */
export function sessionProblem(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'not an object';
  const s = value as Record<string, unknown>;
  for (const field of ['id', 'channel', 'environment', 'process', 'key']) {
    if (typeof s[field] !== 'string') return `${field} is missing or not text`;
  }
  if (!STATES.has(String(s.state))) return 'state is missing or unknown';
  for (const field of ['vars', 'binding']) {
    if (typeof s[field] !== 'object' || s[field] === null || Array.isArray(s[field])) return `${field} is missing or not an object`;
  }
  for (const field of ['history', 'log']) if (!Array.isArray(s[field])) return `${field} is missing or not a list`;
  for (const field of ['created', 'lastActivity']) if (typeof s[field] !== 'number') return `${field} is missing or not a number`;
  if (s.state === 'waiting') {
    const at = s.waitingAt as Record<string, unknown> | undefined;
    if (!at || typeof at.nodeId !== 'string' || typeof at.since !== 'number') return 'a waiting Session without the node it waits at';
  }
  return undefined;
}
