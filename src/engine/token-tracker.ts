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
  private readonly inFlight = new Map<number, Flight>();
  private readonly announced = new WeakMap<object, number>();
  private readonly pendingChecks = new Set<number>();

  constructor(
    private readonly onStopped: (step: number) => void,
    private readonly graceMs = 25,
  ) {}

  delivered(step: number, msg: object, nodeId?: string): void {
    this.enter(step, nodeId);
    this.announced.set(msg, (this.announced.get(msg) ?? 0) + 1);
  }

  received(step: number, msg: object, nodeId?: string): void {
    const announced = this.announced.get(msg) ?? 0;
    if (announced > 0) this.announced.set(msg, announced - 1);
    else this.enter(step, nodeId);
  }

  /**
   * The engine holds the token itself while a waiting node resumes (it may download files before
   * it sends), so a check scheduled earlier cannot take that moment for a stopped flow.
   */
  hold(step: number): void {
    this.enter(step, undefined);
  }

  release(step: number): void {
    this.completed(step);
  }

  completed(step: number, nodeId?: string): void {
    const flight = this.inFlight.get(step);
    if (flight && nodeId !== undefined) {
      const here = (flight.nodes.get(nodeId) ?? 0) - 1;
      if (here > 0) flight.nodes.set(nodeId, here);
      else flight.nodes.delete(nodeId);
    }
    const count = (flight?.count ?? 0) - 1;
    if (flight && count > 0) {
      flight.count = count;
      return;
    }
    this.inFlight.delete(step);
    this.check(step);
  }

  /**
   * The nodes holding the step's token now (delivered to, not yet done). A deploy that restarts
   * some nodes only cuts the steps whose token one of them holds; the others finish on their own.
   */
  nodesHolding(step: number): Iterable<string> {
    return this.inFlight.get(step)?.nodes.keys() ?? [];
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

  private enter(step: number, nodeId: string | undefined): void {
    let flight = this.inFlight.get(step);
    if (!flight) {
      flight = { count: 0, nodes: new Map() };
      this.inFlight.set(step, flight);
    }
    flight.count++;
    if (nodeId !== undefined) flight.nodes.set(nodeId, (flight.nodes.get(nodeId) ?? 0) + 1);
  }
}

/** A step's token copies in flight: how many, and in which nodes. */
interface Flight {
  count: number;
  nodes: Map<string, number>;
}
