import { randomBytes } from 'node:crypto';
import type { RED } from '../model/red';
import { runtimeText } from '../model/texts';
import { StoreUnavailable, type SessionStore } from '../stores/session-store';

const FAULT_LOG_MS = 30_000;

export interface HealthListener {
  /** The Environments on a store: their starts show whether it can be written. */
  environmentsOn(store: SessionStore): string[];
  showNote(environmentId: string, unavailable: boolean): void;
  /** Writes work again: what waited is handled now. */
  resumed(): void;
  /** Every failure, for the metrics (the log line is written at most every FAULT_LOG_MS). */
  fault?(store: SessionStore): void;
}

/**
 * Whether each store can be written. A failure is logged once in a while (not per request) and
 * shown on the starts of every Environment on that store; the first success after it clears that
 * and lets waiting items run.
 */
export class StoreHealth {
  private readonly faults = new Map<SessionStore, number>();

  constructor(
    private readonly red: RED,
    private readonly listener: HealthListener,
  ) {}

  /** Runs a store call; a failure becomes StoreUnavailable (the route answers 503). */
  async guard<T>(store: SessionStore, work: () => Promise<T>): Promise<T> {
    try {
      const result = await work();
      this.recovered(store);
      return result;
    } catch (err) {
      this.failed(store, err);
      throw err instanceof StoreUnavailable ? err : new StoreUnavailable((err as Error).message, err);
    }
  }

  /**
   * Whether steps may run on a store: yes, unless it failed; then only once a real write succeeds.
   * A step that cannot be saved would run (and send its replies) again at every sweep, and an
   * empty transaction proves nothing (it writes nothing, even to a full disk).
   */
  async writable(store: SessionStore): Promise<boolean> {
    if (!this.faults.has(store)) return true;
    try {
      await store.seen(`channel-sessions/probe/${randomBytes(6).toString('hex')}`, 1);
    } catch (err) {
      this.failed(store, err);
      return false;
    }
    this.recovered(store);
    return true;
  }

  /** Whether the store failed and has not been written since (the sweep probes it). */
  faulty(store: SessionStore): boolean {
    return this.faults.has(store);
  }

  failed(store: SessionStore, err: unknown): void {
    this.listener.fault?.(store);
    const last = this.faults.get(store);
    const now = Date.now();
    if (last !== undefined && now - last <= FAULT_LOG_MS) return;
    this.red.log.error(`[channel-sessions] ${runtimeText(this.red, 'core', 'runtime.log.storeFault', { message: (err as Error).message })}`);
    this.faults.set(store, now);
    for (const id of this.listener.environmentsOn(store)) this.listener.showNote(id, true);
  }

  recovered(store: SessionStore): void {
    if (!this.faults.has(store)) return;
    this.faults.delete(store);
    this.red.log.info(`[channel-sessions] ${runtimeText(this.red, 'core', 'runtime.log.storeResumed', { store: store.description })}`);
    for (const id of this.listener.environmentsOn(store)) this.listener.showNote(id, false);
    this.listener.resumed();
  }
}
