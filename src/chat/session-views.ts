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
  const lines = [...history.map(historyLine), ...log.map(logLine).filter((l): l is TranscriptLine => l !== undefined)].sort((a, b) => a.at - b.at);
  const end = endLine(session);
  if (end) lines.push(end);
  return lines;
}

/** The transcript line a Session event adds, if any (what the editor is pushed). */
export function lineOf(event: SessionEvent): TranscriptLine | undefined {
  if (event.type === 'history') return historyLine(event.entry as HistoryEntry);
  if (event.type === 'log') return logLine(event.entry as SessionLogEntry);
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
  return { at: entry.at, from: 'system', kind: entry.level, text: entry.message, ...(entry.code ? { code: entry.code } : {}) };
}

function endLine(session: SessionRecord): TranscriptLine | undefined {
  if (session.state !== 'completed' && session.state !== 'ended') return undefined;
  return { at: session.lastActivity, from: 'system', kind: 'end', text: session.endReason ?? session.state };
}
