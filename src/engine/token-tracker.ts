/**
 * Knows when a Session's token has stopped moving without reaching a wait or an EndTask.
 *
 * It counts, per Session, the messages in flight through Node-RED's message hooks: +1 for each
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
  private readonly inFlight = new Map<string, number>();
  private readonly announced = new WeakMap<object, number>();
  private readonly pendingChecks = new Set<string>();

  constructor(
    private readonly onStopped: (sessionId: string) => void,
    private readonly graceMs = 25,
  ) {}

  delivered(sessionId: string, msg: object): void {
    this.inFlight.set(sessionId, (this.inFlight.get(sessionId) ?? 0) + 1);
    this.announced.set(msg, (this.announced.get(msg) ?? 0) + 1);
  }

  received(sessionId: string, msg: object): void {
    const announced = this.announced.get(msg) ?? 0;
    if (announced > 0) this.announced.set(msg, announced - 1);
    else this.inFlight.set(sessionId, (this.inFlight.get(sessionId) ?? 0) + 1);
  }

  /**
   * The engine holds the token itself while a waiting node resumes (it may download files before
   * it sends), so a check scheduled earlier cannot take that moment for a stopped flow.
   */
  hold(sessionId: string): void {
    this.inFlight.set(sessionId, (this.inFlight.get(sessionId) ?? 0) + 1);
  }

  release(sessionId: string): void {
    this.completed(sessionId);
  }

  completed(sessionId: string): void {
    const count = (this.inFlight.get(sessionId) ?? 0) - 1;
    if (count > 0) {
      this.inFlight.set(sessionId, count);
      return;
    }
    this.inFlight.delete(sessionId);
    this.check(sessionId);
  }

  /** After our own node sends (or decides not to), look again: an unwired output sends nothing. */
  check(sessionId: string): void {
    if (this.pendingChecks.has(sessionId)) return;
    this.pendingChecks.add(sessionId);
    setTimeout(() => {
      this.pendingChecks.delete(sessionId);
      if (!this.inFlight.has(sessionId)) this.onStopped(sessionId);
    }, this.graceMs);
  }

  forget(sessionId: string): void {
    this.inFlight.delete(sessionId);
  }
}
