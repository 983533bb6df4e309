/** Items remembered as handed out at most: far more than steps run at once. */
const HANDED_OUT_KEPT = 10_000;
/** An item whose step is over without consuming it: its next hand-out is a first one. */
const FRESH = -1;

/**
 * Which items were handed to a step before, for a store one process owns (`InboundItem.again`):
 * the process knows the hand-outs it made itself, and of the items its file held when it opened,
 * it cannot tell which the process before it had begun (it died), so each counts as begun when it
 * was recorded. No write per step: the one process that owns the file keeps this in memory.
 *
 * Bounded: an item leaves when its step is over (consumed, or run as a step of its own), and past
 * HANDED_OUT_KEPT the oldest is forgotten (its step, should it run again, then runs as a first one).
 */
export class HandedOut {
  private readonly first = new Map<number, number>();
  /** The highest seq the file held when it was opened: those up to it may have been begun. */
  private before = 0;

  /** The file (again) opened with items up to `highest`: whatever this process remembered is about another file's seqs. */
  opened(highest: number): void {
    this.first.clear();
    this.before = highest;
  }

  /**
   * The item is handed out now: undefined the first time, else when it first was (its record time
   * for an item the file held at open).
   */
  handOut(seq: number, recordedAt: number): number | undefined {
    const since = this.first.get(seq);
    if (since !== undefined && since !== FRESH) return since;
    const begun = seq <= this.before && since === undefined ? recordedAt : undefined;
    this.first.set(seq, begun ?? Date.now());
    if (this.first.size > HANDED_OUT_KEPT) this.first.delete(this.first.keys().next().value as number);
    return begun;
  }

  /** The item's step is over: consumed (forgotten), or left to run as a step of its own (its next hand-out a first one). */
  over(seq: number, consumed: boolean): void {
    if (consumed) this.first.delete(seq);
    else this.first.set(seq, FRESH);
  }
}
