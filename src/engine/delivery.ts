import type { ChannelName } from '../model/channels';
import type { FileList } from '../files/file-values';
import type { SessionRecord } from '../model/session';
import type { InboundMessage, Opening } from './starts';
import type { InboundItem } from '../stores/session-store';

/** What a module's inbound item means once read: which conversation, what message, whether it may start. */
export interface Delivery {
  channel: ChannelName;
  message: InboundMessage;
  /** Whether this message may open a Session when none is live (Start-sessions-from rules). */
  mayStart: boolean;
  /**
   * Why a message that may not start found no live Session, when the module knows: its outcome is
   * then refused with this reason (the route tells the flow author) instead of ignored.
   */
  notStarted?: string;
  /** Channel data a new Session keeps (where to reply). */
  binding?: Record<string, unknown>;
  /** The far party a new Session is with (`SessionRecord.person`), when the module indexes one. */
  person?: string;
  /** Builds the start variable once the opening message's files are kept. */
  opening?(session: SessionRecord, files: FileList): Opening;
  /** Whether the opening message's files are downloaded (team chat needs `files:read`). */
  keepOpeningFiles?: boolean;
  /**
   * Start endpoints: only open a Session; when the conversation already has a live one, leave it
   * untouched and answer `existing`.
   */
  startOnly?: boolean;
  /** Keys the step's commit remembers whatever the message did (the messenger's 24-hour window). */
  marks?: Array<{ key: string; ttlMs: number }>;
  /**
   * The start node the Session opens at, instead of the one the Environment's Processes choose (an
   * out node that placed a call); refused when that node is not deployed for this Environment.
   */
  startAt?: string;
  /** Dedupe keys to set when this message acted (the other copy of a double delivery then does nothing). */
  marksWhenHandled?: Array<{ key: string; ttlMs: number }>;
}

/**
 * Turns a recorded item of a module's kind back into a Delivery, inside the conversation's step
 * (so it sees the live Session, if any). Undefined: the item is ignored.
 */
export type InboundReader = (item: InboundItem, live: SessionRecord | undefined) => Promise<Delivery | undefined>;

export type DeliveryOutcome =
  | { kind: 'started' | 'continued'; session: SessionRecord }
  | { kind: 'existing'; session: SessionRecord }
  | { kind: 'ignored' }
  | { kind: 'refused'; reason: string };

/** What a route records: the conversation and the item, as plain JSON. */
export interface Acceptance {
  environment: string;
  conversation: string;
  kind: string;
  payload: unknown;
  /** The provider's id of the message (event id, MessageSid): a redelivery is recorded once. */
  dedupe?: { key: string; ttlMs: number };
}

/** A recorded item the route may wait for: its Session opened (or not), then its step done. */
export interface Accepted {
  seq: number;
  /** Resolves once the step opened or found the conversation's Session, or ended without one. */
  opened: Promise<DeliveryOutcome>;
  /** Resolves once the step waits or ends again. */
  settled: Promise<DeliveryOutcome>;
}
