import type { Engine } from '../engine/engine';
import type { SessionRecord } from '../engine/session';

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

export function detail(engine: Engine, session: SessionRecord) {
  return { ...summary(engine, session), vars: session.vars, history: session.history, log: session.log, transcript: transcript(session) };
}

/** History, warnings and errors, and the end, in order. */
export function transcript(session: SessionRecord): TranscriptLine[] {
  const lines: TranscriptLine[] = session.history.map((h) => ({
    at: h.at, from: h.from, kind: h.kind ?? 'message', text: h.text,
    ...(h.files ? { files: h.files } : {}), ...(h.detail !== undefined ? { detail: h.detail } : {}),
  }));
  for (const entry of session.log) {
    if (entry.level === 'info') continue;
    lines.push({ at: entry.at, from: 'system', kind: entry.level, text: entry.message, ...(entry.code ? { code: entry.code } : {}) });
  }
  lines.sort((a, b) => a.at - b.at);
  if (session.state === 'completed' || session.state === 'ended') {
    lines.push({ at: session.lastActivity, from: 'system', kind: 'end', text: session.endReason ?? session.state });
  }
  return lines;
}
