/**
 * Knows when a step's token has stopped moving without reaching a wait or an EndTask.
 *
 * It counts, per step (by its number, not by Session id: a step cut by a deploy may still have a
 * token in the closed flow while the same Session's item runs again), the messages in flight through Node-RED's message hooks: +1 for each
 * delivery (`preDeliver`) and for each reception that no delivery announced (`onReceive` of a
 * Catch, Complete or Link-in node, which the runtime feeds directly), -1 when a node calls
 * `done()` (`onComplete`). When the count drops to zero the Session is checked a moment later
 * (so a node that re-emits, like Link out or a Catch node, can be counted first).
 *
 * Limits (documented in the README): a node whose input handler never calls `done()` keeps the
 * count above zero, and so does one that throws synchronously; such a Session ends at its idle
 * expiry instead. A node that swallows a message and later emits a new one (join, batch) lets
 * the Session end in between.
 */
export class TokenTracker {
  private readonly inFlight = new Map<number, number>();
  private readonly announced = new WeakMap<object, number>();
  private readonly pendingChecks = new Set<number>();

  constructor(
    private readonly onStopped: (step: number) => void,
    private readonly graceMs = 25,
  ) {}

  delivered(step: number, msg: object): void {
    this.inFlight.set(step, (this.inFlight.get(step) ?? 0) + 1);
    this.announced.set(msg, (this.announced.get(msg) ?? 0) + 1);
  }

  received(step: number, msg: object): void {
    const announced = this.announced.get(msg) ?? 0;
    if (announced > 0) this.announced.set(msg, announced - 1);
    else this.inFlight.set(step, (this.inFlight.get(step) ?? 0) + 1);
  }

  /**
   * The engine holds the token itself while a waiting node resumes (it may download files before
   * it sends), so a check scheduled earlier cannot take that moment for a stopped flow.
   */
  hold(step: number): void {
    this.inFlight.set(step, (this.inFlight.get(step) ?? 0) + 1);
  }

  release(step: number): void {
    this.completed(step);
  }

  completed(step: number): void {
    const count = (this.inFlight.get(step) ?? 0) - 1;
    if (count > 0) {
      this.inFlight.set(step, count);
      return;
    }
    this.inFlight.delete(step);
    this.check(step);
  }

  /** After our own node sends (or decides not to), look again: an unwired output sends nothing. */
  check(step: number): void {
    if (this.pendingChecks.has(step)) return;
    this.pendingChecks.add(step);
    setTimeout(() => {
      this.pendingChecks.delete(step);
      if (!this.inFlight.has(step)) this.onStopped(step);
    }, this.graceMs);
  }

  forget(step: number): void {
    this.inFlight.delete(step);
  }
}
