import { HISTORY_LIMIT, LOG_LIMIT, SESSION_FORMAT, type HistoryEntry, type SessionLogEntry, type SessionRecord } from '../model/session';

const STATES: ReadonlySet<string> = new Set(['running', 'waiting', 'completed', 'ended']);

/**
 * The format of a stored inbound item (a received message, a timer that fell due), written with it
 * as `v`. 1: the items written before formats were numbered (stored without one), the same shape.
 */
export const ITEM_FORMAT = 1;

/**
 * A stored Session as text, checked before the engine trusts it: a record missing a field would
 * otherwise wedge its conversation (every later message acknowledged and dropped). An older format
 * is upgraded to the current one.
 */
export function readSessionRecord(text: string): { session: SessionRecord } | { problem: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { problem: `not JSON: ${(err as Error).message}` };
  }
  return upgradeSession(value);
}

/** A stored Session (parsed) checked and brought to the current format, or what is wrong with it. */
export function upgradeSession(value: unknown): { session: SessionRecord } | { problem: string } {
  const problem = sessionProblem(value);
  if (problem) return { problem };
  const session = value as SessionRecord & { history?: HistoryEntry[]; log?: SessionLogEntry[] };
  if (isFormat1(session)) {
    // Format 1 kept the history inside the record: its lines become the Session's new lines, so the
    // next commit stores them apart in the same write as the record that no longer has them (a
    // reader that only looks, such as the Sessions view, finds them there until then).
    const history = (session.history ?? []).slice(-HISTORY_LIMIT);
    delete session.history;
    session.historyLines = history.length;
    if (history.length) session.newHistory = history;
  }
  if (formatBefore3(session)) {
    // Formats 1 and 2 kept the log inside the record: its entries become the new ones, as the
    // history above, and the next commit stores them apart.
    const log = (session.log ?? []).slice(-LOG_LIMIT);
    delete session.log;
    session.logLines = log.length;
    if (log.length) session.newLog = log;
    session.v = SESSION_FORMAT;
  }
  if (session.person === undefined) {
    const person = personBefore(session);
    if (person) session.person = person;
  }
  return { session };
}

/**
 * The far party of a Session written before records kept it (`person`): a voice Session's caller,
 * or the number its Call out called, is its `binding.from`; other Channels had none. The stores
 * fill their person index of such Sessions from it once, at open.
 */
function personBefore(session: Pick<SessionRecord, 'channel' | 'binding'>): string | undefined {
  const from = session.channel === 'TelcoVoice' ? session.binding.from : undefined;
  return typeof from === 'string' && from ? from : undefined;
}

/** A Session's record as stored: without the history lines and log entries that its commit appends apart. */
export function recordText(session: SessionRecord): string {
  const { newHistory: _lines, newLog: _entries, ...record } = session;
  return JSON.stringify(record);
}

/**
 * The history lines a commit appends, each with its line number (the last is `historyLines`), at
 * most HISTORY_LIMIT of them: a store appends only the lines it does not have yet, so a commit
 * tried again after its reply was lost appends nothing twice.
 */
export function linesToAppend(session: SessionRecord): Array<{ n: number; line: HistoryEntry }> {
  return numbered(session.newHistory, session.historyLines, HISTORY_LIMIT);
}

/** The log entries a commit appends, each with its number (the last is `logLines`), as the history's lines. */
export function logToAppend(session: SessionRecord): Array<{ n: number; line: SessionLogEntry }> {
  return numbered(session.newLog, session.logLines, LOG_LIMIT);
}

function numbered<T>(added: T[] | undefined, last: number, limit: number): Array<{ n: number; line: T }> {
  const lines = (added ?? []).slice(-limit);
  const first = last - lines.length + 1;
  return lines.map((line, i) => ({ n: first + i, line }));
}

/** History lines or log entries as a store reads them back, oldest first; a damaged one is left out of what is shown (the conversation does not depend on it). */
export function parsedLines<T>(raw: unknown[]): T[] {
  const lines: T[] = [];
  for (const line of raw) {
    try {
      lines.push(JSON.parse(String(line)) as T);
    } catch {
      // left out
    }
  }
  return lines;
}

/** Format 1: written before formats were numbered (no `v`), or naming itself 1. */
function isFormat1(record: { v?: unknown }): boolean {
  return record.v === undefined || record.v === 1;
}

/** Formats 1 and 2: the log inside the record. */
function formatBefore3(record: { v?: unknown }): boolean {
  return isFormat1(record) || record.v === 2;
}

/** What is wrong with a value that should be a Session record, or undefined when nothing is. */
export function sessionProblem(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'not an object';
  const s = value as Record<string, unknown>;
  const formatProblem = formatOf(s.v, SESSION_FORMAT);
  if (formatProblem) return formatProblem;
  for (const field of ['id', 'channel', 'environment', 'process', 'key']) {
    if (typeof s[field] !== 'string') return `${field} is missing or not text`;
  }
  if (!STATES.has(String(s.state))) return 'state is missing or unknown';
  for (const field of ['vars', 'binding']) {
    if (typeof s[field] !== 'object' || s[field] === null || Array.isArray(s[field])) return `${field} is missing or not an object`;
  }
  if (formatBefore3(s) && !Array.isArray(s.log)) return 'log is missing or not a list';
  if (!formatBefore3(s) && !isCount(s.logLines)) return 'logLines is missing or not a count';
  if (s.person !== undefined && typeof s.person !== 'string') return 'person is not text';
  if (isFormat1(s) && !Array.isArray(s.history)) return 'history is missing or not a list';
  if (!isFormat1(s) && !isCount(s.historyLines)) return 'historyLines is missing or not a count';
  for (const field of ['created', 'lastActivity']) if (typeof s[field] !== 'number') return `${field} is missing or not a number`;
  if (s.state === 'waiting') {
    const at = s.waitingAt as Record<string, unknown> | undefined;
    if (!at || typeof at.nodeId !== 'string' || typeof at.since !== 'number') return 'a waiting Session without the node it waits at';
  }
  return undefined;
}

function isCount(value: unknown): boolean {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0;
}

/**
 * Why a stored format number cannot be read (undefined when it can): one from a later version of
 * the package is set aside rather than misread, and named, so a downgrade says what it left.
 */
export function formatOf(v: unknown, current: number): string | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1) return `its format (v) is not a version number`;
  if (v > current) return `it is in format ${v}, newer than this version of the package reads (${current}); written by a later version`;
  return undefined;
}
