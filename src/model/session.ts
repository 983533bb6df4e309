import type { ChannelName } from './channels';
import type { TaskErrorInfo } from './errors';

export type SessionState = 'running' | 'waiting' | 'completed' | 'ended';

/** Who said what, in order; files by name only. */
export interface HistoryEntry {
  at: number;
  from: 'user' | 'bot';
  text: string;
  files?: string[];
  /**
   * How the line was said: a plain message, an InputTask prompt, a buttons template, a block
   * message, a post to a channel, a frame an AI agent's flow sent on its relay, a thread status
   * (these three shown only in the Test chat).
   */
  kind?: 'message' | 'prompt' | 'buttons' | 'blocks' | 'post' | 'relay' | 'status';
  /** Extra data for a preview in the test chat (block JSON, button template). */
  detail?: unknown;
}

export interface SessionLogEntry {
  at: number;
  level: 'info' | 'warn' | 'error';
  code?: number;
  message: string;
  nodeId?: string;
  /** An error the Task sent down its wired error branch: a path the flow takes on purpose, not a fault. */
  handled?: boolean;
}

/** What the Sessions view shows of a Session beside its record: its history and its log, oldest first. */
export interface SessionStory {
  history: HistoryEntry[];
  log: SessionLogEntry[];
}

/** Where a Session waits and what it waits for. */
export interface WaitPoint {
  nodeId: string;
  /** The node type, so a removed node can be named in the log line. */
  nodeType: string;
  since: number;
  /** Set by the start when it asks for the opening message (test chat without text). */
  opening?: boolean;
}

/**
 * The format of a stored Session record, written in it as `v`. A reader takes every older format
 * and upgrades it (record-check.ts); a record of a newer format (written by a later version of the
 * package) is not guessed at.
 * 1: the records written before formats were numbered (no `v`), the history inside the record.
 * 2: the history kept apart, line by line (`SessionStore.history`); the record counts its lines.
 * 3: the log kept apart as well, entry by entry (`SessionStore.sessionLog`); the record counts its entries.
 */
export const SESSION_FORMAT = 3;

/** One conversation's state record, kept in the Environment's Session store. */
export interface SessionRecord {
  /** The format it was written in (SESSION_FORMAT once read: readers upgrade older ones). */
  v: number;
  id: string;
  channel: ChannelName;
  /** The Environment config node's id; empty for a test-chat Session of a shared Start. */
  environment: string;
  /** The flow tab (Process) id. */
  process: string;
  /** Conversation key: the conversation index maps it to this live Session. */
  key: string;
  isTest: boolean;
  vars: Record<string, unknown>;
  /** Channel data the module needs to answer (chat channel and thread, call id, number pair). */
  binding: Record<string, unknown>;
  /**
   * The far party on its Channel (for voice, the phone number: the caller, or the number a Call
   * out called), set when the Session opens, for modules that set one. The stores index it, so
   * a person's live Sessions are found without reading the others (`SessionStore.liveWith`).
   */
  person?: string;
  waitingAt?: WaitPoint;
  /**
   * How many history lines the Session has said and heard, ever (the store keeps the last
   * HISTORY_LIMIT of them, apart from the record): the last of them is line `historyLines`, which
   * makes appending them again (a commit tried twice) a no-op.
   */
  historyLines: number;
  /**
   * History lines not yet in the store: those this step added (and, read from a record of format 1,
   * the history it carried). The step's commit appends them and writes the record without them; a
   * step therefore never reads or rewrites the earlier lines. The whole history: `history` of the store.
   */
  newHistory?: HistoryEntry[];
  /**
   * How many log entries the Session has written, ever (the store keeps the last LOG_LIMIT of
   * them, apart from the record, as it keeps the history): every status of every message a
   * Session sends is one, so a log inside the record made each step of a long conversation write
   * it all again.
   */
  logLines: number;
  /** Log entries not yet in the store, as `newHistory` for the history. The whole log: `sessionLog` of the store. */
  newLog?: SessionLogEntry[];
  created: number;
  lastActivity: number;
  state: SessionState;
  endReason?: string;
  error?: TaskErrorInfo;
}

/** `msg.session`: the Session reference every token of a Session carries. */
export interface SessionRef {
  id: string;
  channel: ChannelName;
  environment: string;
  process: string;
  isTest: boolean;
}

/** The token that travels the flow for a Session. */
export interface TokenMessage {
  _msgid?: string;
  session: SessionRef;
  vars: Record<string, unknown>;
  payload?: unknown;
  error?: TaskErrorInfo;
  [key: string]: unknown;
}

export function sessionRef(session: SessionRecord): SessionRef {
  return {
    id: session.id,
    channel: session.channel,
    environment: session.environment,
    process: session.process,
    isTest: session.isTest,
  };
}

export function isLive(session: SessionRecord): boolean {
  return session.state === 'running' || session.state === 'waiting';
}

/** How much of a Session's history and log is kept, so a long conversation stays small. */
export const HISTORY_LIMIT = 200;
export const LOG_LIMIT = 100;
