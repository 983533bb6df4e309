import type { RED } from '../model/red';
import { HISTORY_LIMIT, LOG_LIMIT, sessionRef, type HistoryEntry, type SessionLogEntry, type SessionRecord, type TokenMessage } from '../model/session';

/**
 * What the Sessions view and the test chat follow: a line of history or log, a change of state, or
 * (`draft`) the text so far of an answer still being written, which is shown and never kept.
 */
export interface SessionEvent {
  type: 'history' | 'log' | 'state' | 'draft';
  session: SessionRecord;
  entry?: HistoryEntry | SessionLogEntry;
}

/**
 * Where a Session's story is written: its conversation history, its log, and the events the
 * editor follows. The engine, the steps and the Tasks all write here, so none needs the others.
 */
export class Journal {
  private readonly listeners = new Set<(event: SessionEvent) => void>();

  constructor(private readonly red: RED) {}

  /** A line of the conversation: kept with the step's new lines, which its commit appends to the stored history. */
  addHistory(session: SessionRecord, entry: Omit<HistoryEntry, 'at'>): void {
    const full = { at: Date.now(), ...entry };
    const lines = (session.newHistory ??= []);
    lines.push(full);
    session.historyLines++;
    if (lines.length > HISTORY_LIMIT) lines.splice(0, lines.length - HISTORY_LIMIT);
    this.emit({ type: 'history', session, entry: full });
  }

  /** A log entry: kept with the step's new entries, which its commit appends to the stored log. */
  addLog(session: SessionRecord, entry: Omit<SessionLogEntry, 'at'>): void {
    const full = { at: Date.now(), ...entry };
    const entries = (session.newLog ??= []);
    entries.push(full);
    session.logLines++;
    if (entries.length > LOG_LIMIT) entries.splice(0, entries.length - LOG_LIMIT);
    this.emit({ type: 'log', session, entry: full });
  }

  /** An answer still being written (Stream reply in a test Session): the editor shows it growing; its finished text becomes a history line. */
  draft(session: SessionRecord, text: string): void {
    this.emit({ type: 'draft', session, entry: { at: Date.now(), from: 'bot', kind: 'message', text } });
  }

  /** The Session changed state (waiting, running, ended). */
  changed(session: SessionRecord): void {
    this.emit({ type: 'state', session });
  }

  /** A new token of the Session: the message that walks the flow. */
  token(session: SessionRecord, payload?: unknown): TokenMessage {
    return { _msgid: this.red.util.generateId(), session: sessionRef(session), vars: session.vars, payload };
  }

  onSessionEvent(listener: (event: SessionEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private emit(event: SessionEvent): void {
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch {
        // a listener (the editor feed) must never break a Session
      }
    }
  }
}
