import type { HistoryEntry, SessionLogEntry, SessionRecord } from '../model/session';

/**
 * The store seam: everything about Sessions that must outlive a process or be shared by several
 * (the Sessions, what was received and not yet handled, who handles a conversation now, timers,
 * dedupe keys). The engine talks only to this; the embedded SQLite store, the in-process store and
 * the Redis store sit behind it.
 *
 * The rule it serves: a webhook is acknowledged only after `record` resolved, and a Session
 * changes only by `commit`, one atomic write per step that also consumes the inbound item the step
 * handled. So after a crash a conversation is where its last completed step left it, and every
 * recorded item not yet consumed is handled again.
 *
 * What a step sends to a provider on the way (a reply, a post, a call placed) is journaled: each
 * effect's outcome is written by `recordEffect` as soon as the provider answered, before the flow
 * goes on, and a step that runs again (a deploy or a stop cut it, the process died, another
 * instance took over) reads its journal by `effectsOf` and gets each recorded outcome back instead
 * of sending it again. The journal is the step's: its commit drops it, as does an item set aside.
 *
 * A Session's history is kept apart from its record, so that a step costs the same at the
 * two-hundredth line as at the second: the commit appends the lines the step added (in the same
 * atomic write as the record) and drops those beyond HISTORY_LIMIT; only what shows the history
 * (the Sessions view, the test chat) reads it, by `history`. Its log is kept apart the same way
 * (LOG_LIMIT entries, read by `sessionLog`): every status of every message sent writes an entry.
 */
export interface SessionStore {
  /** For the deploy log: what a crash keeps ("SQLite at ~/.node-red/channel-sessions.db"). */
  readonly description: string;
  /** Whether an acknowledged message survives a crash of this process. */
  readonly durable: boolean;
  /** Whether several Node-RED instances may share it. */
  readonly shared: boolean;

  /**
   * Durably records an inbound item for a conversation, in arrival order. With `dedupe`, an item
   * whose key was recorded within its time to live is not recorded again ('duplicate').
   * Rejects (StoreUnavailable) when it cannot be written: the webhook then answers 503.
   */
  record(item: NewInboundItem): Promise<{ seq: number } | 'duplicate'>;

  /**
   * The oldest item of the conversation not yet consumed. With `handOut`, it is handed to a step
   * (the worker's, under the lease): the store remembers it was, so a later hand-out of the same
   * item says its step runs again (`InboundItem.again`). Without, it is only looked at.
   */
  next(conversation: ConversationRef, handOut?: boolean): Promise<InboundItem | undefined>;

  /** Whether an item is still waiting to be handled (someone else may be handling it). */
  pending(seq: number): Promise<boolean>;

  /**
   * The right to handle a conversation's items for `leaseMs`; undefined when another holder has
   * it. A holder whose lease expired is refused by `commit` (its fence is stale).
   */
  claim(conversation: ConversationRef, owner: string, leaseMs: number): Promise<Lease | undefined>;
  renew(lease: Lease, leaseMs: number): Promise<boolean>;
  /**
   * `renew` of several leases in one call (one round trip to a shared store): for each, whether it
   * is still the holder's. Optional: the worker renews each lease without it.
   */
  renewAll?(leases: Lease[], leaseMs: number): Promise<boolean[]>;
  release(lease: Lease): Promise<void>;

  /**
   * `claim`, then `next`, in one call (one round trip to a shared store): the lease and the
   * conversation's oldest item (undefined when none waits); undefined when another holder has it.
   * Optional: the worker calls `claim` and `next` without it.
   */
  claimNext?(conversation: ConversationRef, owner: string, leaseMs: number): Promise<Claimed | undefined>;
  /**
   * Lets go of the lease only when no item of its conversation waits, as one atomic step: true when
   * it let go (or the lease was no longer this holder's), false when an item waits (the holder
   * keeps the lease and handles it). An item recorded before it (by another instance, whose claim
   * found the lease taken) is seen, and one recorded after it finds the conversation free, so the
   * holder need not look again once it let go. Optional: the worker calls `next` and `release`, and
   * looks again after letting go, without it.
   */
  releaseIfIdle?(lease: Lease): Promise<boolean>;

  /** The conversation's live Session. */
  liveSession(conversation: ConversationRef): Promise<SessionRecord | undefined>;
  sessionById(id: string): Promise<SessionRecord | undefined>;

  /**
   * A Session's history, oldest first: the last HISTORY_LIMIT lines its commits appended (none
   * once it ended and was removed). Lines of a record of format 1 not yet moved out by a commit
   * are in its `newHistory`, not here.
   */
  history(sessionId: string): Promise<HistoryEntry[]>;

  /** A Session's log, oldest first: the last LOG_LIMIT entries its commits appended, as `history`. */
  sessionLog(sessionId: string): Promise<SessionLogEntry[]>;

  /**
   * An effect of the step handling item `seq` (a reply the provider took, a call it placed): its
   * outcome (plain JSON) under the effect's key, one write, as soon as the provider answered and
   * before the flow goes on. Refused (LeaseLost) unless the lease is still the holder's: the step
   * is another holder's now, and so is its journal.
   */
  recordEffect(lease: Lease, conversation: ConversationRef, seq: number, key: string, outcome: unknown): Promise<void>;

  /**
   * The journal of the step handling item `seq`: each recorded effect's outcome by its key (empty
   * when none). Read once when a step runs again (`InboundItem.again`), unless the hand-out brought
   * it (`again.effects`).
   */
  effectsOf(conversation: ConversationRef, seq: number): Promise<Map<string, unknown>>;

  /**
   * One step, atomically: the Session as it now stands (its record, and its `newHistory` appended
   * to its history: the lines numbered up to `historyLines` that the store does not have yet, so a
   * commit tried again appends nothing twice; its `newLog` to its log the same way, up to
   * `logLines`), the item it consumed, its timers. A Session that ended is removed with its history
   * and log. The journal of the item it handled is dropped with it (`journal`, and `consumed`'s).
   */
  commit(step: StepCommit): Promise<CommitOutcome>;

  /**
   * Moves timers that are due into their conversations as inbound items (each exactly once, also
   * with several instances) and returns the conversations that got one.
   */
  takeDueTimers(now: number, limit: number): Promise<ConversationRef[]>;

  /**
   * Conversations with items nobody is handling (after a crash, or a lease that expired); with
   * `owner`, also those whose lease that owner still holds without handling them (its release
   * failed while the store was away), which `claim` by the same owner takes again.
   */
  orphans(limit: number, owner?: string): Promise<ConversationRef[]>;

  /** Live Sessions, newest activity first. */
  list(filter: { environment?: string; waitingAt?: string[]; limit: number }): Promise<SessionRecord[]>;
  count(filter: { environment?: string }): Promise<number>;
  /** Waiting Sessions by the node they wait at (for the "N waiting" status). */
  waitingByNode(): Promise<Map<string, number>>;
  /**
   * Live Sessions (running or waiting) and, of them, those waiting at a node, per Environment and
   * Channel (the metrics' Session gauges). The rule it serves: a scrape every few seconds must not
   * stall a shared Redis or a big database file by reading the Sessions, so a store keeps these
   * counts as its commits change Sessions (an older store's Sessions are counted once, at open) and
   * answers in time proportional to the pairs it gives; the in-process store may count its own
   * Sessions, which reads nothing outside the process. A pair with no live Session is left out.
   */
  countByChannel(): Promise<ChannelCount[]>;
  /**
   * The live Sessions of an Environment with this far party (`SessionRecord.person`), from an
   * index the store keeps with the Sessions. The rule it serves: a check made for each message on a
   * hot path (Call out's one live call per person, 4030) must not read the Environment's other
   * Sessions, and must find the person's however many others there are. A Session written before
   * records kept `person` (a voice Session: its `binding.from`) is in the index from the store's open.
   */
  liveWith(environment: string, person: string): Promise<SessionRecord[]>;

  /** A key remembered for `ttlMs` (dedupe across restarts and instances): true when it was already there. */
  seen(key: string, ttlMs: number): Promise<boolean>;

  /**
   * Whether a key is remembered now (by `seen`, a recorded item's dedupe, or a commit's marks,
   * which remember it anew for their time to live each time), without setting it. Optional: a
   * store without it remembers nothing for its callers (the messenger's 24-hour window).
   */
  remembered?(key: string): Promise<boolean>;
  /**
   * Paces an action shared by every instance (calls placed per second): takes the next slot of
   * `key`, at least `intervalMs` after the slot taken before it and not before `now`, and returns
   * when it begins. Atomic, so two instances never get the same slot; the caller waits until then.
   * Optional: without it a process paces only itself.
   */
  takeSlot?(key: string, intervalMs: number, now: number): Promise<number>;

  /**
   * A shared store's outbox per conversation (a voice call's TwiML verbs not yet answered), so
   * whichever instance answers the call's next webhook or Redirect says what another instance's
   * step produced. Appended in order, kept `ttlMs` after the last append; `takeOutput` takes all.
   * Only shared stores have it: one process keeps its outbox in memory.
   */
  pushOutput?(conversation: ConversationRef, items: unknown[], ttlMs: number): Promise<void>;
  takeOutput?(conversation: ConversationRef): Promise<unknown[]>;

  close(): Promise<void>;
}

export interface ConversationRef {
  environment: string;
  conversation: string;
}

export interface NewInboundItem extends ConversationRef {
  /** Who reads the payload: a module's inbound kind, or one of the engine's own (timeout, expire, end). */
  kind: string;
  /** Plain JSON: it must read the same after a restart. */
  payload: unknown;
  dedupe?: { key: string; ttlMs: number };
}

export interface InboundItem extends ConversationRef {
  seq: number;
  kind: string;
  payload: unknown;
  at: number;
  /**
   * Set when the item was handed to a step before (`claimNext`, `next` with `handOut`) and is
   * handed out again: its step runs again. `since`: when it was first handed out (the time it was
   * recorded, when the store cannot tell: a file left by a process that died); `effects`: its
   * journal, when the store read it in the same call (otherwise the step reads it by `effectsOf`).
   */
  again?: { since: number; effects?: Map<string, unknown> };
}

/** What `countByChannel` gives for one Environment and Channel. */
export interface ChannelCount {
  environment: string;
  channel: string;
  /** Running or waiting. */
  live: number;
  /** Waiting at a node (part of `live`). */
  waiting: number;
}

/** What `claimNext` hands over. */
export interface Claimed {
  lease: Lease;
  item: InboundItem | undefined;
  /**
   * With an item, the conversation's live Session, when the store read it in the same call (a
   * shared store saves two round trips); without, the step reads it by `liveSession`. Only a
   * commit under the lease changes it, so it is still the live one when the step begins.
   */
  live?: { session: SessionRecord | undefined };
}

export interface Lease extends ConversationRef {
  owner: string;
  /** Grows with every claim of the conversation; a commit with an older fence is refused. */
  fence: number;
}

export interface SessionTimer {
  kind: 'timeout' | 'expire';
  due: number;
  /** What the timer item carries back (the wait it belongs to). */
  payload: unknown;
}

export interface StepCommit {
  lease: Lease;
  /** The inbound item this step handled. */
  consumed?: number;
  /** The Session as the step left it: waiting (kept, with its timers) or ended (removed). */
  session?: SessionRecord;
  /**
   * The waiting Session's timers as of this step (a kind left out is removed). A store may leave an
   * `expire` armed at an earlier due than asked, in the same conversation: it fires early and its
   * step arms it again. None may fire later than asked.
   */
  timers?: SessionTimer[];
  /** Dedupe keys the step sets (a message handled once whichever copy came first). */
  marks?: Array<{ key: string; ttlMs: number }>;
  /**
   * Also let go of the lease, in the same atomic step, when no item of the conversation waits
   * after this one (what `releaseIfIdle` does). A store that can resolves the commit to what it
   * did (CommitOutcome); one that resolves to nothing did not look, and the worker lets go itself.
   */
  releaseIfIdle?: boolean;
  /**
   * The item whose effects journal the commit drops: the step's own, consumed or left to run again
   * as a step of its own (`consumed` alone drops that item's). Set when the step has a journal.
   */
  journal?: number;
}

/**
 * What a commit asked to `releaseIfIdle` did: 'released' (no item waited), 'kept' (one waits: the
 * holder handles it); undefined from a store that does not release in the commit.
 */
export type CommitOutcome = 'released' | 'kept' | undefined;

/** The store could not be read or written (disk full, read-only, Redis down). */
export class StoreUnavailable extends Error {
  constructor(
    message: string,
    override readonly cause?: unknown,
  ) {
    super(message);
    this.name = 'StoreUnavailable';
  }
}

/** A commit from a holder whose lease another instance has since taken. */
export class LeaseLost extends Error {
  constructor(conversation: ConversationRef) {
    super(`the lease on conversation ${conversation.conversation} was taken over`);
    this.name = 'LeaseLost';
  }
}
