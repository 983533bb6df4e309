import type { ConversationRef } from '../session-store';

/**
 * How many recorded items each conversation has not consumed yet, kept by the one process that
 * owns the database file: the worker asks "does another item wait?" after every step before it
 * lets go of a conversation, and this answers without a read.
 *
 * The rule it serves: it may say yes when none waits (a write counted whose transaction then
 * failed; the worker looks, finds nothing, and `none` puts it right), never no when one does. So
 * an item is counted inside the write that records it, before its commit is seen by anyone, and
 * uncounted only once the write that consumed it was committed. At most `limit` conversations are
 * counted: past that (a backlog of that many conversations) it stops counting new ones and answers
 * yes for any it does not count, so the worker reads, as it did before the counts. Once the
 * backlog has drained to half the limit, `stale` asks the store to load the counts from its file
 * again, and it answers without reads again; a backlog that overflows again waits for the next
 * half, so a recount costs a read for every half-limit of conversations served, at most.
 */
export class PendingItems {
  private readonly counts = new Map<string, number>();
  /** Some conversation with items was not counted, the limit being reached. */
  private overflowed = false;
  /** How many times the counts were loaded from the file (`loaded`, `consumed`). */
  private loads = 0;

  constructor(private readonly limit = 100_000) {}

  /** The counts as the file has them (at open, or after the store opened its file again). */
  load(rows: Array<{ environment: string; conversation: string; n: number }>): void {
    this.loads++;
    this.counts.clear();
    this.overflowed = false;
    for (const row of rows) if (row.n > 0) this.count(keyOf(row), row.n);
  }

  added(ref: ConversationRef): void {
    const key = keyOf(ref);
    this.count(key, (this.counts.get(key) ?? 0) + 1);
  }

  private count(key: string, n: number): void {
    if (this.counts.has(key) || this.counts.size < this.limit) this.counts.set(key, n);
    else this.overflowed = true;
  }

  /** Which load the counts are of: taken inside a write that consumes, and given to `consumed` after its commit. */
  loaded(): number {
    return this.loads;
  }

  /**
   * An item of the conversation consumed by a committed write. `countedAt` (`loaded` inside that
   * write): when the counts were loaded from the file since, that load read the file without the
   * item already, and taking it off again could make a waiting item's count 0.
   */
  consumed(ref: ConversationRef, countedAt?: number): void {
    if (countedAt !== undefined && countedAt !== this.loads) return;
    const key = keyOf(ref);
    const n = (this.counts.get(key) ?? 0) - 1;
    if (n > 0) this.counts.set(key, n);
    else this.counts.delete(key);
  }

  /** A read found no item of the conversation: whatever was counted was not written. */
  none(ref: ConversationRef): void {
    this.counts.delete(keyOf(ref));
  }

  /** Some conversation is not counted, and the counted ones are few enough to count all again (`load`). */
  stale(): boolean {
    return this.overflowed && this.counts.size <= this.limit / 2;
  }

  any(ref: ConversationRef): boolean {
    return (this.counts.get(keyOf(ref)) ?? 0) > 0 || this.overflowed;
  }
}

function keyOf(ref: ConversationRef): string {
  return `${ref.environment}\u0000${ref.conversation}`;
}
