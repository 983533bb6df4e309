import { isLive, type SessionRecord } from '../model/session';

interface ActiveSession {
  session: SessionRecord;
  /** A deploy or stop cut the step: it is not committed and runs again from its recorded item. */
  abandoned: boolean;
  /** The deploys seen when the step began: a later one may have cut the flow. */
  deploys: number;
  settleWaiters: Array<() => void>;
}

/**
 * The Sessions inside a step right now: the only ones in memory (waiting ones live in the store).
 * Tokens find their Session here; a step ends when its Session settles (waits or ends).
 */
export class ActiveSessions {
  private readonly steps = new Map<string, ActiveSession>();

  activate(session: SessionRecord, deploys: number): void {
    this.steps.set(session.id, { session, abandoned: false, deploys, settleWaiters: [] });
  }

  /** Whether a deploy began since the Session's step did. */
  deployedSince(session: SessionRecord, deploys: number): boolean {
    const step = this.steps.get(session.id);
    return step !== undefined && step.deploys !== deploys;
  }

  deactivate(session: SessionRecord | undefined): void {
    if (session) this.steps.delete(session.id);
  }

  has(id: string): boolean {
    return this.steps.has(id);
  }

  get(id: string): SessionRecord | undefined {
    return this.steps.get(id)?.session;
  }

  /** The live Session a token belongs to; undefined when it is not in a step. */
  live(id: string): SessionRecord | undefined {
    const session = this.get(id);
    return session && isLive(session) ? session : undefined;
  }

  all(): SessionRecord[] {
    return [...this.steps.values()].map((s) => s.session);
  }

  isAbandoned(session: SessionRecord): boolean {
    return this.steps.get(session.id)?.abandoned ?? false;
  }

  abandon(session: SessionRecord): void {
    const step = this.steps.get(session.id);
    if (!step) return;
    step.abandoned = true;
    this.settle(session);
  }

  /**
   * Cuts the steps that began before deploy number `deploys` and still run: their tokens were in
   * nodes the deploy stopped (a node may drop a message without telling, like a delay node).
   */
  abandonOlderThan(deploys: number): number {
    let cut = 0;
    for (const step of this.steps.values()) {
      if (step.deploys < deploys && step.session.state === 'running' && !step.abandoned) {
        step.abandoned = true;
        this.settle(step.session);
        cut++;
      }
    }
    return cut;
  }

  /** Resolves when the Session waits, has ended, or its step was cut. */
  whenSettled(session: SessionRecord): Promise<void> {
    const step = this.steps.get(session.id);
    if (session.state !== 'running' || !step || step.abandoned) return Promise.resolve();
    return new Promise((resolve) => step.settleWaiters.push(resolve));
  }

  settle(session: SessionRecord): void {
    const step = this.steps.get(session.id);
    if (!step) return;
    for (const resolve of step.settleWaiters.splice(0)) resolve();
  }
}
