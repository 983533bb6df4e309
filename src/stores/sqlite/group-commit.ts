/** A write waiting for its batch: what it does (for the error message) and the work itself. */
export interface BatchedWrite {
  what: string;
  work: () => unknown;
}

export type WriteOutcome = { value: unknown } | { error: unknown };

interface Queued extends BatchedWrite {
  resolve(value: unknown): void;
  reject(err: unknown): void;
}

/** A turn of the event loop with more writes than this runs them in several transactions. */
const MAX_BATCH = 256;

/**
 * Group commit for a store whose writes are synchronous transactions. Writes asked for in the same
 * turn of the event loop are run together at setImmediate, so under load many webhooks and steps
 * share one transaction: one COMMIT, fewer pages written to the log, and with synchronous=FULL one
 * disk flush. No write's promise settles before its batch is committed, so a webhook is still
 * acknowledged only once its message is recorded. Bounded: at most MAX_BATCH writes wait.
 */
export class WriteBatcher {
  private queue: Queued[] = [];
  private scheduled: NodeJS.Immediate | undefined;

  /** `run` does the writes in one transaction and says how each ended, in order; it throws when none was done. */
  constructor(private readonly run: (writes: BatchedWrite[]) => WriteOutcome[]) {}

  add<T>(what: string, work: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ what, work, resolve: resolve, reject });
      if (this.queue.length >= MAX_BATCH) this.flush();
      else this.scheduled ??= setImmediate(() => this.flush());
    });
  }

  /** Runs what waits now (also before the store closes). */
  flush(): void {
    if (this.scheduled) clearImmediate(this.scheduled);
    this.scheduled = undefined;
    const batch = this.queue;
    this.queue = [];
    if (!batch.length) return;
    let outcomes: WriteOutcome[];
    try {
      outcomes = this.run(batch);
    } catch (err) {
      for (const write of batch) write.reject(err);
      return;
    }
    batch.forEach((write, i) => {
      const outcome = outcomes[i];
      if ('error' in outcome) write.reject(outcome.error);
      else write.resolve(outcome.value);
    });
  }
}
