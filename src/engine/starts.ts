import { TEST_CHANNEL, type ChannelName } from '../model/channels';
import type { IncomingFile } from '../files/intake';
import type { FileList } from '../files/file-values';
import type { OpeningAnswer } from './opening-answer';
import type { RedNode } from '../model/red';

/** What a start writes when a Session begins: the start variable and who talks to whom. */
export interface Opening {
  /** The start variable's value (`{teamchat}`, `{call}`, `{message}`); none for the shared Start. */
  value?: Record<string, unknown>;
  /** `msg.payload` and the first history line. */
  text: string;
  files?: string[];
  sender?: string;
  recipient?: string;
  /** With the shared Start (no start variable), this message answers the first InputTask. */
  answersFirstInput?: OpeningAnswer;
  /** The Session's first variables (an out node's `msg.vars`), before the start variable. */
  vars?: Record<string, unknown>;
  /** The Session opens waiting at the start node (an out node waits for its provider's answer) instead of sending. */
  waits?: boolean;
  /** The start's output the token leaves on (0-based; an out node's outcomes); 0 when none. */
  output?: number;
  /** Fields set on the token beside session, vars and payload (`msg.call` of a call not answered). */
  fields?: Record<string, unknown>;
}

/** A kind of start node, as its module describes it. */
export interface StartKind {
  type: string;
  /** The Channel it serves; null for the shared Start (`session-start`). */
  channel: ChannelName | null;
  /**
   * An out node (Text out, Message first, Call out): it opens Sessions toward a person when a
   * message reaches it, never for an inbound event, so the start chosen for one passes it by.
   */
  outbound?: boolean;
  /**
   * Test chat, playing the start's Channel: the Channels it may play and the one its test data
   * picks (Text out: SMS, or WhatsApp with `whatsapp:` addresses, as a message that reaches it
   * would); without it, `channel`.
   */
  plays?: { channels: ChannelName[]; pick(testData: Record<string, unknown>): ChannelName };
  /**
   * Test chat: the opening from the start's test data; `undefined` when the start must ask for it.
   * `channel` is the test Session's: Chat, or the start's own Channel when the Test chat plays it.
   */
  testOpening?(testData: Record<string, unknown>, channel: ChannelName): Opening | undefined;
  /** Test chat: the opening built from the first chat message, when the test data had no text. */
  testOpeningFromMessage?(testData: Record<string, unknown>, text: string, files: FileList, channel: ChannelName): Opening;
}

/** A deployed start node. */
export interface StartRegistration {
  node: RedNode;
  kind: StartKind;
  /** Channel starts: the Environment it is bound to. */
  environment?: string;
  /** Shared Start: module key -> the Environment id it serves. */
  serves?: Record<string, string>;
  variable: string;
  testData: Record<string, unknown>;
}

/** An inbound message as a module hands it to the engine. */
export interface InboundMessage {
  text: string;
  files: IncomingFile[];
  /** Module data for the node that waits (a tapped button, digits, a recording). */
  data?: Record<string, unknown>;
  /**
   * Parts of the answer an InputTask keeps beside its Store variable, each as `<variable>_<name>`
   * (a shared location: `_location`). An undefined value removes one a former answer left.
   */
  answerFields?: Record<string, unknown>;
  /**
   * The person's line in the Session history when it is not `text`: what they saw on the button
   * or menu option they picked, where `text` is its value (as the chat apps show a tapped button).
   */
  said?: string;
  /**
   * Not something the person said (a note the flow sends its own waiting node, e.g. what an AI
   * agent said in the test chat): the Session history gets no user line for it.
   */
  notSaid?: boolean;
  /**
   * Nothing came in the time the Channel gave the person (a call's Gather that ended in silence;
   * see `ChannelBehaviour.timesNoReply`): a Task waiting with a "no reply" output takes it, any
   * other takes `error`.
   */
  noReply?: boolean;
  /** The channel could not read an answer (a call with neither speech nor digits): the waiting Task takes its error branch. */
  error?: { code: 3005 | 4001 | 4009 | 4012; message: string };
}

/**
 * The Channel a test Session plays from this start: the one its test data picks (the node's own
 * test data under the Test chat's), else the start's own.
 */
export function playedChannel(start: StartRegistration, testData: Record<string, unknown> | undefined): ChannelName {
  if (start.kind.plays) return start.kind.plays.pick({ ...start.testData, ...(testData ?? {}) });
  return start.kind.channel ?? TEST_CHANNEL;
}

/**
 * Chooses the start for an inbound event of Environment E on Channel C: the start
 * for C bound to E; else a shared Start serving E; else the Process's only start, which refuses
 * with 8025. Among several Processes the first in flow order serves.
 */
export function chooseStart(
  starts: StartRegistration[],
  environment: string,
  channel: ChannelName,
  moduleKey: string,
  order: (processId: string) => number,
): StartRegistration | undefined {
  const byOrder = (a: StartRegistration, b: StartRegistration) => order(a.node.z ?? '') - order(b.node.z ?? '') || a.node.id.localeCompare(b.node.id);
  starts = starts.filter((s) => !s.kind.outbound);
  const own = starts.filter((s) => s.kind.channel === channel && s.environment === environment).sort(byOrder);
  if (own.length) return own[0];
  const shared = starts.filter((s) => s.kind.channel === null && s.serves?.[moduleKey] === environment).sort(byOrder);
  if (shared.length) return shared[0];
  const bound = starts.filter((s) => s.environment === environment).sort(byOrder);
  return bound[0];
}
