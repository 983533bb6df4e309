import type { Verb } from './verbs';

/**
 * The verbs a call's Session produced that the provider has not been answered yet.
 *
 * A webhook opens a round: the engine runs the flow and Tasks add verbs here until the Session
 * waits or ends, then the route answers them all. When the flow is too slow, the route answers
 * what is there, plus a Redirect; the verbs produced meanwhile stay here for the redirected
 * request, so nothing is lost or said twice.
 */
export class CallRound {
  private verbs: Verb[] = [];
  /** The delivery in flight for this call; resolves when the Session waits or ends. */
  pending: Promise<void> | undefined;

  add(verb: Verb): void {
    this.verbs.push(verb);
  }

  /** Takes every verb collected so far; each verb is answered exactly once. */
  drain(): Verb[] {
    const verbs = this.verbs;
    this.verbs = [];
    return verbs;
  }

  get empty(): boolean {
    return this.verbs.length === 0;
  }
}

/** Calls in progress this process answers at most; a bound, not a limit anyone should meet. */
const MAX_ROUNDS = 10_000;

/** Forgotten leftovers after this long without a request (a caller who hung up mid-flow). */
const ORPHAN_MS = 5 * 60 * 1000;

export class CallRounds {
  private readonly rounds = new Map<string, CallRound>();
  private readonly orphanTimers = new Map<string, NodeJS.Timeout>();

  of(environment: string, callSid: string): CallRound {
    const key = roundKey(environment, callSid);
    this.keep(key);
    let round = this.rounds.get(key);
    if (!round) {
      round = new CallRound();
      this.rounds.set(key, round);
      if (this.rounds.size > MAX_ROUNDS) this.dropOldest();
    }
    return round;
  }

  find(environment: string, callSid: string): CallRound | undefined {
    return this.rounds.get(roundKey(environment, callSid));
  }

  /** The call's Session has ended and its last answer went out. */
  forget(environment: string, callSid: string): void {
    const key = roundKey(environment, callSid);
    this.keep(key);
    this.rounds.delete(key);
  }

  /** The Session ended while an answer may still be due: drop the round if nobody asks for it. */
  forgetLater(environment: string, callSid: string): void {
    const key = roundKey(environment, callSid);
    this.keep(key);
    const timer = setTimeout(() => {
      this.orphanTimers.delete(key);
      this.rounds.delete(key);
    }, ORPHAN_MS);
    timer.unref();
    this.orphanTimers.set(key, timer);
  }

  /** More calls in progress than any deployment has: the oldest round (a long-gone call) goes. */
  private dropOldest(): void {
    const oldest = this.rounds.keys().next().value;
    if (oldest === undefined) return;
    this.keep(oldest);
    this.rounds.delete(oldest);
  }

  size(): number {
    return this.rounds.size;
  }

  private keep(key: string): void {
    const timer = this.orphanTimers.get(key);
    if (timer) clearTimeout(timer);
    this.orphanTimers.delete(key);
  }
}

function roundKey(environment: string, callSid: string): string {
  return `${environment}\u0000${callSid}`;
}
