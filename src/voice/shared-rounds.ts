import type { Engine } from '../engine/engine';
import { StoreUnavailable, type ConversationRef, type SessionStore } from '../stores/session-store';
import type { Verb } from './verbs';

/** How long a call's unanswered verbs stay in the store (a caller who hung up mid-flow). */
const KEPT_MS = 5 * 60 * 1000;
/** How often a Redirect looks whether the step of its call has been committed. */
const POLL_MS = 50;

export type OutboxStore = SessionStore & Required<Pick<SessionStore, 'pushOutput' | 'takeOutput'>>;

/** The Environment's store when several instances share it (voice verbs then live there). */
export function sharedStoreOf(engine: Engine, environmentId: string): OutboxStore | undefined {
  const store = engine.storeOf(environmentId);
  return store?.shared && store.pushOutput && store.takeOutput ? (store as OutboxStore) : undefined;
}

/**
 * A call's verbs when the Environment's store is shared: Tasks add them in order (each append
 * chained after the last), the step's commit waits for them (`flush`, from the behaviour's
 * `beforeCommit`), and whichever instance answers the call takes them from the store. Bounded by
 * the calls with a step running in this process.
 */
export class SharedRounds {
  private readonly chains = new Map<string, { done: Promise<void>; failed?: unknown }>();

  constructor(private readonly engine: Engine) {}

  /** The shared store of the Environment, if any (verbs then go there instead of the local round). */
  storeFor(environmentId: string): OutboxStore | undefined {
    return sharedStoreOf(this.engine, environmentId);
  }

  add(store: OutboxStore, ref: ConversationRef, verb: Verb): void {
    const key = keyOf(ref);
    const entry = this.chains.get(key) ?? { done: Promise.resolve() };
    const done = entry.done
      .then(() => store.pushOutput(ref, [verb], KEPT_MS))
      .catch((err: unknown) => {
        entry.failed = err;
      });
    entry.done = done;
    this.chains.set(key, entry);
  }

  /** Resolves when every verb added so far is in the store; rejects when one could not be written. */
  async flush(ref: ConversationRef): Promise<void> {
    const key = keyOf(ref);
    const entry = this.chains.get(key);
    if (!entry) return;
    await entry.done;
    if (this.chains.get(key) === entry) this.chains.delete(key);
    if (entry.failed) {
      throw entry.failed instanceof StoreUnavailable
        ? entry.failed
        : new StoreUnavailable(`a reply of call ${ref.conversation} could not be kept: ${(entry.failed as Error).message}`, entry.failed);
    }
  }
}

/**
 * Waits until the call has no recorded item left to handle (its step committed, here or on
 * another instance) or the deadline; true when it got there in time.
 */
export async function untilHandled(store: SessionStore, ref: ConversationRef, deadline: number): Promise<boolean> {
  for (;;) {
    if (!(await store.next(ref))) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((r) => setTimeout(r, Math.min(POLL_MS, Math.max(0, deadline - Date.now()))));
  }
}

function keyOf(ref: ConversationRef): string {
  return `${ref.environment}\u0000${ref.conversation}`;
}
