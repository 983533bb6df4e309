import type { FileStore } from '../files/file-store';
import type { RedNode } from '../model/red';
import type { SessionLogEntry, SessionRecord, TokenMessage } from '../model/session';
import type { ChannelName } from '../model/channels';
import type { Effect } from './effects';

/**
 * What a Task node hands to its Channel's behaviour: the Session and its token, the node, and the
 * few engine services a behaviour uses (the Session's files, its log), not the whole engine.
 */
export interface TaskContext {
  session: SessionRecord;
  msg: TokenMessage;
  node: RedNode;
  /** Where the Session's received files are kept (attachments name them). */
  files: FileStore;
  /** A line in the Session log (the Sessions view shows it). */
  log: (entry: Omit<SessionLogEntry, 'at'>) => void;
  /** Whether the Session's store remembers a key a step marked (the messenger's 24-hour window). */
  remembered: (key: string) => Promise<boolean>;
  /**
   * Every provider effect of the step (a reply, a post, an update, a file, a call) goes through
   * this: `send` makes it and resolves to what the flow needs afterwards (plain JSON: the ts and
   * channel, the sid and status), which is recorded in the Session store before this resolves. When
   * the step runs again (a deploy, a stop, a crash, another instance took over), an effect recorded
   * is not sent again: its outcome is given back; one that may have been on its way is first looked
   * up (`lookup`). See engine/effects.ts.
   */
  effect: Effect;
}

/**
 * How a module makes the standard Tasks behave on its Channel. Texts arrive as templates: the
 * module resolves placeholders itself, so it can make user content literal for its channel.
 */
export interface ChannelBehaviour {
  channel: ChannelName;
  /** OutputTask: say or post the text and the Attachments. */
  output(task: TaskContext, text: string, attachments: string): Promise<Said>;
  /**
   * InputTask: ask (the prompt may be empty); the engine then waits for the next message.
   * `noReplySeconds`: the Task's "no reply after", for a Channel that times it itself.
   */
  prompt(task: TaskContext, prompt: string, input: { filesVariable?: string; noReplySeconds?: number }): Promise<Said>;
  /**
   * The Channel times an InputTask's "no reply after" itself, from when the person could first
   * answer (a call's prompt is heard only once the provider has played what comes before it), and
   * reports the silence as a message with `noReply`; the engine arms no timer for it.
   */
  timesNoReply?: boolean;
  /** EndTask: anything the channel does when a Session completes (hang up); posts nothing. */
  end(task: TaskContext): Promise<void>;
  /** A Session on this Channel ended in any way; free what the module holds for it. */
  sessionEnded?(session: SessionRecord): void;
  /**
   * A test Session ended in any way. Its Tasks ran on the Chat behaviour whatever Channel it
   * played, so its own Channel's `sessionEnded` is not called; a module whose Tasks keep something
   * for a test Session (the AI agent's stand-in relay) frees it here.
   */
  testSessionEnded?(session: SessionRecord): void;
  /** Before the step is committed: what the module still writes to a shared store for it is written (a rejection retries the step). */
  beforeCommit?(session: SessionRecord): Promise<void>;
}

/** What a Task said, for the conversation history: resolved text (not escaped) and file names. */
export interface Said {
  text: string;
  files?: string[];
  /** Kept with the history line for the test chat (the Chat Channel's download ids). */
  detail?: unknown;
}
