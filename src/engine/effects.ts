import { LeaseLost, StoreUnavailable, type InboundItem, type Lease, type SessionStore } from '../stores/session-store';
import type { SessionRecord } from '../model/session';
import type { RED } from '../model/red';
import type { StoreHealth } from './store-health';
import type { ActiveSessions } from './active-sessions';
import { runtimeText } from '../model/texts';

/** Makes the effect at the provider (a post, a message, a call placed); `key` names it (metadata a lookup finds it by). Resolves to plain JSON. */
export type EffectSend<T> = (key: string) => Promise<T>;

/**
 * Looks an effect that may have been made already up at the provider: the step ran before and
 * stopped while it was on its way (sent, its outcome not recorded). `since`: when that earlier run
 * of the step began (nothing older can be it). Resolves to the effect's outcome, as `send` would
 * have, when the provider has it; undefined when it does not; throws when it cannot tell (no scope,
 * the provider did not answer): the effect is then sent again and the log says it may be a duplicate.
 */
export type EffectLookup<T> = (key: string, since: number) => Promise<T | undefined>;

export interface EffectOptions<T> {
  lookup?: EffectLookup<T>;
}

/** What a Task (or an item's reader) calls for each provider effect of its step: see `Effects`. */
export type Effect = <T>(kind: string, send: EffectSend<T>, options?: EffectOptions<T>) => Promise<T>;

/** An effect made outside any step's journal (no Session, a Test chat preview): sent, nothing recorded. */
export const unjournaled: Effect = (_kind, send) => send('');

/**
 * The step an effect was asked for was cut (a deploy, a stop, another instance that took the
 * conversation over): the token stops here, and the step runs again from its recorded item (here or
 * there), replaying what it recorded.
 */
export class StepCut extends Error {
  constructor(message = 'the step was cut; it runs again') {
    super(message);
    this.name = 'StepCut';
  }
}

/** A recorded outcome as the store keeps it: the effect's kind beside its value. */
interface Recorded {
  k: string;
  v: unknown;
}

/** What a step's journal needs of the engine. */
export interface JournalContext {
  red: RED;
  health: StoreHealth;
  active: ActiveSessions;
}

/**
 * The effects journal of one step. Each effect the step asks for gets a key: the Session (when the
 * step has one), the step (its item's seq, in its conversation) and the effect's position in the
 * step, 1, 2, 3… in the order its Tasks ask. A step that runs again walks the same flow with the
 * same recorded message, so the same effect gets the same key.
 *
 * An effect whose outcome the journal has (read once, when the step runs again) is not sent: its
 * outcome is given back. One the step may have sent in its earlier run without recording it (the
 * first positions not recorded, up to one past the last recorded) is looked up at the provider when
 * the Task can (`lookup`). Any other is sent, and its outcome recorded in the store before the flow
 * goes on.
 */
export class StepJournal {
  private position = 0;
  /** The step recorded an effect: the commit drops the journal. */
  private wrote = false;
  /** The last position the earlier run recorded. */
  private readonly lastRecorded: number;
  /** Over: committed, or cut (then its effects are refused, its re-run makes them). */
  private over: 'committed' | 'cut' | undefined;

  constructor(
    private readonly ctx: JournalContext,
    private readonly store: SessionStore,
    private readonly lease: Lease,
    private readonly item: InboundItem,
    /** The earlier runs' journal, when the step runs again. */
    private readonly recorded: Map<string, unknown> | undefined,
  ) {
    let last = 0;
    for (const key of recorded?.keys() ?? []) last = Math.max(last, Number(key.slice(key.lastIndexOf(':') + 1)) || 0);
    this.lastRecorded = last;
  }

  /** Whether the store holds a journal of this step (the commit names it to drop it). */
  get held(): boolean {
    return this.wrote || this.recorded !== undefined;
  }

  /** The step is over: committed, or left to run again (then a late effect of its tokens is refused). */
  end(committed: boolean): void {
    this.over = committed ? 'committed' : 'cut';
  }

  async effect<T>(session: SessionRecord | undefined, kind: string, send: EffectSend<T>, options: EffectOptions<T> = {}): Promise<T> {
    if (this.over === 'cut' || (session && this.ctx.active.isAbandoned(session))) throw new StepCut();
    // A token that outlived its committed step (it should not) sends as before, without a journal.
    if (this.over === 'committed') return send(`${session?.id ?? 'step'}:${this.item.seq}:0`);
    const position = ++this.position;
    const key = `${session?.id ?? 'step'}:${this.item.seq}:${position}`;
    const found = this.recorded?.get(key) as Recorded | undefined;
    if (found && typeof found === 'object' && found.k === kind) return found.v as T;
    if (this.recorded && options.lookup && position <= this.lastRecorded + 1) {
      const since = this.item.again?.since ?? this.item.at;
      let looked: T | undefined;
      try {
        looked = await options.lookup(key, since);
      } catch (err) {
        const said = { kind, key, session: session?.id ?? '-', message: (err as Error).message };
        this.ctx.red.log.warn(`[channel-sessions] ${runtimeText(this.ctx.red, 'core', 'runtime.log.effectMayRepeat', said)}`);
      }
      if (looked !== undefined) {
        await this.record(session, key, kind, looked);
        return looked;
      }
    }
    const value = await send(key);
    await this.record(session, key, kind, value);
    return value;
  }

  /**
   * The outcome written before the flow goes on. Another instance that took the conversation over
   * cuts the step (it runs the step itself, and finds this effect by its lookup). A store that
   * cannot take the write (full, down) does not: the effect is made, so the flow goes on, and the
   * step's commit is tried again as it is until the store is back, as any step's is; cutting it
   * would make the re-run send it again.
   */
  private async record(session: SessionRecord | undefined, key: string, kind: string, value: unknown): Promise<void> {
    const outcome: Recorded = { k: kind, v: value ?? null };
    try {
      await this.store.recordEffect(this.lease, this.item, this.item.seq, key, outcome);
      this.wrote = true;
    } catch (err) {
      if (!(err instanceof LeaseLost)) {
        this.ctx.health.failed(this.store, err);
        // Part of the journal may be there: the commit drops it.
        this.wrote = true;
        return;
      }
      const said = { conversation: this.item.conversation, message: err.message };
      this.ctx.red.log.warn(`[channel-sessions] ${runtimeText(this.ctx.red, 'core', 'runtime.log.leaseLost', said)}`);
      if (session) this.ctx.active.abandon(session);
      this.over = 'cut';
      throw new StepCut();
    }
  }
}

/**
 * The journals of the steps in progress (at most one per step running): found by the Session record
 * a step works on (a step's own record, so a token of a cut step finds its cut journal, not the
 * re-run's) or, for what an item's reader sends before any Session, by the item.
 */
export class Effects {
  private readonly bySession = new WeakMap<SessionRecord, StepJournal>();
  private readonly byItem = new Map<string, StepJournal>();

  constructor(private readonly ctx: JournalContext) {}

  /**
   * A step begins: its journal, read from the store when the step runs again (the hand-out brought
   * it, or one read). Rejects (StoreUnavailable) when it cannot be read: the step is tried later.
   */
  async begin(store: SessionStore, item: InboundItem, lease: Lease): Promise<StepJournal> {
    let recorded: Map<string, unknown> | undefined;
    if (item.again) {
      try {
        recorded = item.again.effects ?? (await store.effectsOf(item, item.seq));
      } catch (err) {
        throw err instanceof StoreUnavailable ? err : new StoreUnavailable((err as Error).message, err);
      }
    }
    const journal = new StepJournal(this.ctx, store, lease, item, recorded);
    this.byItem.set(itemKey(item), journal);
    return journal;
  }

  /** The Session the step works on (read from the store, or opened by it). */
  bind(session: SessionRecord, journal: StepJournal): void {
    this.bySession.set(session, journal);
  }

  /** The step is over (committed, or left to run again). */
  end(item: InboundItem, journal: StepJournal, committed: boolean): void {
    journal.end(committed);
    if (this.byItem.get(itemKey(item)) === journal) this.byItem.delete(itemKey(item));
  }

  /** An effect of a Task of the Session's step; outside a step (an AI agent's turn), sent as it is. */
  forSession<T>(session: SessionRecord, kind: string, send: EffectSend<T>, options?: EffectOptions<T>): Promise<T> {
    const journal = this.bySession.get(session);
    return journal ? journal.effect(session, kind, send, options) : send(`${session.id}:-:0`);
  }

  /** An effect of an item's reader, before its step has a Session (a call placed); outside a step, sent as it is. */
  forItem<T>(item: InboundItem, kind: string, send: EffectSend<T>, options?: EffectOptions<T>): Promise<T> {
    const journal = this.byItem.get(itemKey(item));
    return journal ? journal.effect(undefined, kind, send, options) : send(`step:${item.seq}:0`);
  }
}

function itemKey(item: InboundItem): string {
  return `${item.environment}\u0000${item.conversation}\u0000${item.seq}`;
}
