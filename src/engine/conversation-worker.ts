import { randomBytes } from 'node:crypto';
import type { Claimed, CommitOutcome, ConversationRef, InboundItem, Lease, SessionStore } from '../stores/session-store';

/** How a handled item ended: its step was committed, or it must be tried again later. */
export type ItemResult = 'committed' | 'retry';

/**
 * Lets go of the conversation when no other item waits, after a step's commit; `byCommit` is what
 * the commit already did about it (StepCommit.releaseIfIdle), which then only the worker's own
 * view follows: let go, or kept for the item that waits.
 */
export type ReleaseIfLast = (byCommit?: CommitOutcome) => Promise<void>;

export interface WorkerOptions {
  store: SessionStore;
  /** Runs one item's step and commits it under the lease; calls `releaseIfLast` before telling anyone it is done. */
  handle(item: InboundItem, lease: Lease, releaseIfLast: ReleaseIfLast, live?: Claimed['live']): Promise<ItemResult>;
  /** Whether steps may run now (not while the flows restart). */
  mayRun(): boolean;
  leaseMs: number;
  onError(err: unknown, conversation: ConversationRef): void;
}

/**
 * Handles each conversation's recorded items one at a time, in order: it takes the conversation's
 * lease, runs the oldest item's step, and goes on until none is left. Different conversations run
 * in parallel. Bounded by the conversations being handled right now.
 */
export class ConversationWorker {
  /** Who holds leases for this process: several instances may share one store. */
  readonly owner = randomBytes(8).toString('hex');
  private readonly draining = new Map<string, { again: boolean }>();
  /** The leases of the steps running now (at most one per conversation being handled), renewed together. */
  private readonly inStep = new Set<Lease>();
  private renewal: NodeJS.Timeout | undefined;

  constructor(private readonly options: WorkerOptions) {}

  get store(): SessionStore {
    return this.options.store;
  }

  /** Something was recorded for the conversation (or may be waiting there): handle it. */
  kick(ref: ConversationRef): void {
    const key = keyOf(ref);
    const running = this.draining.get(key);
    if (running) {
      running.again = true;
      return;
    }
    if (!this.options.mayRun()) return;
    const state = { again: false };
    this.draining.set(key, state);
    void this.drain(ref, state)
      .catch((err) => this.options.onError(err, ref))
      .finally(() => {
        this.draining.delete(key);
        // A kick that came while the lease was being released must not be lost.
        if (state.again) this.kick(ref);
      });
  }

  get busy(): number {
    return this.draining.size;
  }

  /**
   * A long step keeps its lease, so another instance does not take the conversation meanwhile. The
   * lease is short (a dead instance's conversations are taken over soon after), so it is renewed
   * often: every step in progress at once, in one call to the store when it can.
   */
  private async withRenewal<T>(lease: Lease, work: () => Promise<T>): Promise<T> {
    this.inStep.add(lease);
    if (!this.renewal) {
      this.renewal = setInterval(() => void this.renewAll(), Math.max(20, this.options.leaseMs / RENEWALS_PER_LEASE));
      this.renewal.unref();
    }
    try {
      return await work();
    } finally {
      this.inStep.delete(lease);
      if (!this.inStep.size && this.renewal) {
        clearInterval(this.renewal);
        this.renewal = undefined;
      }
    }
  }

  private async renewAll(): Promise<void> {
    const { store, leaseMs } = this.options;
    const leases = [...this.inStep];
    if (!leases.length) return;
    if (store.renewAll) await store.renewAll(leases, leaseMs).catch(() => undefined);
    else await Promise.all(leases.map((lease) => store.renew(lease, leaseMs).catch(() => undefined)));
  }

  private async drain(ref: ConversationRef, state: { again: boolean }): Promise<void> {
    const { store } = this.options;
    for (;;) {
      state.again = false;
      const claimed = await this.claimNext(ref);
      if (!claimed) return; // another holder handles it, and looks again before it lets go
      const { lease } = claimed;
      let retry = false;
      let released = false;
      /** Let go by `releaseIfIdle`, which saw every item recorded before it. */
      let releasedWhenIdle = false;
      // Let go before the route answers when nothing else waits: an instance that dies right after
      // answering must not hold the conversation for a whole lease (a call would hang up meanwhile).
      const releaseIfLast: ReleaseIfLast = async (byCommit) => {
        if (byCommit === 'kept') return;
        if (byCommit === 'released') {
          released = releasedWhenIdle = true;
          return;
        }
        if (store.releaseIfIdle) {
          released = releasedWhenIdle = await store.releaseIfIdle(lease).catch(() => false);
          return;
        }
        if (await store.next(ref).catch(() => true)) return;
        released = true;
        await store.release(lease).catch(() => undefined);
      };
      /** The claim read the first item (and maybe its Session); each later one is read when its turn comes. */
      let looked = true;
      let item = claimed.item;
      let live = claimed.live;
      try {
        for (;;) {
          if (!this.options.mayRun()) {
            retry = true;
            break;
          }
          if (!looked) item = await store.next(ref, true);
          looked = false;
          if (!item) break;
          const handling = item;
          const read = live;
          live = undefined;
          if ((await this.withRenewal(lease, () => this.options.handle(handling, lease, releaseIfLast, read))) === 'retry') {
            retry = true;
            break;
          }
          if (released) break;
        }
      } finally {
        if (!released) await store.release(lease).catch(() => undefined);
      }
      if (retry) return;
      if (state.again) continue;
      // An item recorded after the last look but before the release found the lease taken: look
      // again (not after releaseIfIdle: it let go only when none was there, atomically).
      if (releasedWhenIdle || !(await store.next(ref))) return;
    }
  }

  /** The lease and the first item, in one call when the store has it. */
  private async claimNext(ref: ConversationRef): Promise<Claimed | undefined> {
    const { store, leaseMs } = this.options;
    if (store.claimNext) return store.claimNext(ref, this.owner, leaseMs);
    const lease = await store.claim(ref, this.owner, leaseMs);
    if (!lease) return undefined;
    try {
      return { lease, item: this.options.mayRun() ? await store.next(ref, true) : undefined };
    } catch (err) {
      await store.release(lease).catch(() => undefined);
      throw err;
    }
  }
}

/**
 * How many times a lease is renewed within its length while its step runs: a renewal may be late
 * (a busy event loop, a slow store) by most of the lease before another instance can take it.
 */
const RENEWALS_PER_LEASE = 5;

function keyOf(ref: ConversationRef): string {
  return `${ref.environment}\u0000${ref.conversation}`;
}
