import type { Accepted, DeliveryOutcome } from './delivery';
import { settleWhenHandledElsewhere } from './settled-elsewhere';
import type { ConversationRef, SessionStore } from '../stores/session-store';

export interface ItemWaiter {
  opened(outcome: DeliveryOutcome): void;
  settled(outcome: DeliveryOutcome): void;
  /** Its step runs in this process now (a shared store's watcher then leaves it alone). */
  handling?: boolean;
}

interface Waiting extends ItemWaiter {
  store: SessionStore;
  seq: number;
  since: number;
}

/**
 * Routes waiting for the items they recorded in this process (voice answers, start endpoints, the
 * test chat). Bounded by the items recorded here and not yet handled.
 */
export class ItemWaiters {
  private readonly waiting = new Map<string, Waiting>();
  private readonly storeIds = new WeakMap<SessionStore, number>();
  private nextStoreId = 1;

  /**
   * With `ref` and a store several instances share, the item may be handled by another instance:
   * the waiter is then settled from the store as soon as it is (settled-elsewhere.ts: the
   * conversation's Session as that step left it), ahead of `sweep`.
   */
  waitFor(store: SessionStore, seq: number, ref?: ConversationRef): Accepted {
    let opened!: (o: DeliveryOutcome) => void;
    let settled!: (o: DeliveryOutcome) => void;
    const openedP = new Promise<DeliveryOutcome>((resolve) => (opened = resolve));
    const settledP = new Promise<DeliveryOutcome>((resolve) => (settled = resolve));
    let wasOpened = false;
    const key = this.key(store, seq);
    const waiter: Waiting = {
      store,
      seq,
      since: Date.now(),
      opened: (o) => {
        if (!wasOpened) opened(o);
        wasOpened = true;
      },
      settled,
    };
    this.waiting.set(key, waiter);
    if (store.shared && ref) {
      settleWhenHandledElsewhere(
        store,
        ref,
        seq,
        () => this.waiting.get(key) !== waiter || waiter.handling === true,
        (o) => this.done(store, seq, o),
      );
    }
    return { seq, opened: openedP, settled: settledP };
  }

  /** Runs the item's step here, marking its waiter so the shared store's watcher does not settle it meanwhile. */
  async whileHandling<T>(store: SessionStore, seq: number, step: () => Promise<T>): Promise<T> {
    const waiter = this.waiting.get(this.key(store, seq));
    if (waiter) waiter.handling = true;
    try {
      return await step();
    } finally {
      if (waiter) waiter.handling = false;
    }
  }

  get(store: SessionStore, seq: number): ItemWaiter | undefined {
    return this.waiting.get(this.key(store, seq));
  }

  /** The item was handled: whoever waited is told how. */
  done(store: SessionStore, seq: number, outcome: DeliveryOutcome): void {
    const key = this.key(store, seq);
    const waiter = this.waiting.get(key);
    this.waiting.delete(key);
    waiter?.opened(outcome);
    waiter?.settled(outcome);
  }

  /**
   * With a shared store another instance may handle an item recorded here: once it is no longer
   * pending, whoever waited for it here is told it was handled elsewhere ('ignored').
   */
  async sweep(olderThanMs: number): Promise<void> {
    const before = Date.now() - olderThanMs;
    for (const waiter of [...this.waiting.values()]) {
      if (!waiter.store.shared || waiter.since > before || waiter.handling) continue;
      if (await waiter.store.pending(waiter.seq).catch(() => true)) continue;
      this.done(waiter.store, waiter.seq, { kind: 'ignored' });
    }
  }

  private key(store: SessionStore, seq: number): string {
    let id = this.storeIds.get(store);
    if (id === undefined) this.storeIds.set(store, (id = this.nextStoreId++));
    return `${id}:${seq}`;
  }
}
