import type { Accepted, DeliveryOutcome } from './delivery';
import type { SessionStore } from './store/session-store';

export interface ItemWaiter {
  opened(outcome: DeliveryOutcome): void;
  settled(outcome: DeliveryOutcome): void;
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

  waitFor(store: SessionStore, seq: number): Accepted {
    let opened!: (o: DeliveryOutcome) => void;
    let settled!: (o: DeliveryOutcome) => void;
    const openedP = new Promise<DeliveryOutcome>((resolve) => (opened = resolve));
    const settledP = new Promise<DeliveryOutcome>((resolve) => (settled = resolve));
    let wasOpened = false;
    this.waiting.set(this.key(store, seq), {
      store, seq, since: Date.now(),
      opened: (o) => {
        if (!wasOpened) opened(o);
        wasOpened = true;
      },
      settled,
    });
    return { seq, opened: openedP, settled: settledP };
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
      if (!waiter.store.shared || waiter.since > before) continue;
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
