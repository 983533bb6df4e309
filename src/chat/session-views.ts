import type { Engine, SessionEvent } from '../engine/engine';
import type { HistoryEntry, SessionLogEntry, SessionRecord } from '../model/session';

/** One line of the test chat transcript / Sessions view. */
export interface TranscriptLine {
  at: number;
  from: 'user' | 'bot' | 'system';
  kind: string;
  text: string;
  files?: string[];
  detail?: unknown;
  code?: number;
}

export function summary(engine: Engine, session: SessionRecord) {
  return {
    id: session.id,
    channel: session.channel,
    environment: session.environment,
    environmentName: session.environment ? engine.environmentName(session.environment) : '',
    process: session.process,
    conversation: session.key,
    isTest: session.isTest,
    // A test Session opened by another's flow at an out node: the Test chat follows it there.
    openedFrom: typeof session.binding?.openedFrom === 'string' ? session.binding.openedFrom : null,
    state: session.state,
    waitingAt: session.waitingAt ?? null,
    created: session.created,
    lastActivity: session.lastActivity,
    endReason: session.endReason ?? null,
    error: session.error ?? null,
  };
}

/** A Session with its history (read from its store: the record does not carry it) and its transcript. */
export async function detail(engine: Engine, session: SessionRecord) {
  const { history, log } = await engine.storyOf(session);
  return { ...summary(engine, session), vars: session.vars, history, log, transcript: transcript(session, history, log) };
}

/** History, warnings and errors, and the end, in order. */
export function transcript(session: SessionRecord, history: HistoryEntry[], log: SessionLogEntry[]): TranscriptLine[] {
  const lines = [...history.map(historyLine), ...log.map(logLine).filter((l): l is TranscriptLine => l !== undefined)].sort(inOrder);
  const end = endLine(session);
  if (end) lines.push(end);
  return lines;
}

/** The transcript line a Session event adds, if any (what the editor is pushed). */
export function lineOf(event: SessionEvent): TranscriptLine | undefined {
  if (event.type === 'history') return historyLine(event.entry as HistoryEntry);
  if (event.type === 'log') return logLine(event.entry as SessionLogEntry);
  if (event.type === 'draft') return undefined;
  return endLine(event.session);
}

function historyLine(h: HistoryEntry): TranscriptLine {
  return {
    at: h.at,
    from: h.from,
    kind: h.kind ?? 'message',
    text: h.text,
    ...(h.files ? { files: h.files } : {}),
    ...(h.detail !== undefined ? { detail: h.detail } : {}),
  };
}

function logLine(entry: SessionLogEntry): TranscriptLine | undefined {
  if (entry.level === 'info') return undefined;
  // An error branch the flow wires is one of its paths (a caller who said nothing): a quiet note, no alarm.
  if (entry.handled)
    return { at: entry.at, from: 'system', kind: 'handled', text: entry.message, ...(entry.nodeId ? { detail: { nodeId: entry.nodeId } } : {}) };
  return { at: entry.at, from: 'system', kind: entry.level, text: entry.message, ...(entry.code ? { code: entry.code } : {}) };
}

/**
 * History and log are kept apart, each in its own order, and lines of one millisecond are common:
 * what the person said comes first, then what went wrong, then what the Process said about it (a
 * Task fails, then its error branch answers), so a transcript reads the same at every read.
 */
const RANK: Record<TranscriptLine['from'], number> = { user: 0, system: 1, bot: 2 };

function inOrder(a: TranscriptLine, b: TranscriptLine): number {
  return a.at - b.at || RANK[a.from] - RANK[b.from];
}

/** The end, with its state: `completed` (an EndTask was reached) reads differently from `ended` (stopped before one). */
function endLine(session: SessionRecord): TranscriptLine | undefined {
  if (session.state !== 'completed' && session.state !== 'ended') return undefined;
  return { at: session.lastActivity, from: 'system', kind: 'end', text: session.endReason ?? session.state, detail: { state: session.state } };
}
