import { isLive, type SessionRecord } from '../model/session';

/**
 * The step a token was made for, on `msg.session` under a symbol: it survives Node-RED's message
 * clones (they copy enumerable symbols) yet is no part of `msg.session`'s JSON, which flows see.
 * `Symbol.for`, so two copies of the package in one runtime agree on it.
 */
export const STEP = Symbol.for('@channel-sessions/node-red:step');

interface ActiveStep {
  session: SessionRecord;
  /** This step's number in the runtime: a re-run of the same Session's item gets a new one. */
  step: number;
  /** A deploy or stop cut the step: it is not committed and runs again from its recorded item. */
  abandoned: boolean;
  /** The deploys seen when the step began: a later one may have cut the flow. */
  deploys: number;
  /** When the step began (a step whose token never settles is ended at the Session's idle timeout). */
  began: number;
  settleWaiters: Array<() => void>;
  /** Called when the step is over: committed, or left to run again. */
  overWaiters: Array<() => void>;
}

/** Why a token finds no Session to work for. */
export type Dropped = 'cut' | 'ended';

/**
 * The Sessions inside a step right now: the only ones in memory (waiting ones live in the store).
 * Tokens find their Session here; a step ends when its Session settles (waits or ends).
 *
 * Each step has its own number, carried on its tokens, and its own Session record (read afresh
 * from the store). A step cut by a deploy may still have a token in the closed flow when the same
 * Session's item runs again: whatever that old token does (stops, waits, ends, fails) belongs to
 * the cut step and must not touch the re-run, though both have the same Session id.
 */
export class ActiveSessions {
  private readonly byId = new Map<string, ActiveStep>();
  private readonly byStep = new Map<number, ActiveStep>();
  private steps = 0;
  /** The last step number given before the latest deploy began: tokens of steps up to it may have been cut. */
  private beforeDeploy = 0;

  /** A step begins for the Session: returns its number. */
  activate(session: SessionRecord, deploys: number): number {
    const old = this.byId.get(session.id);
    if (old) {
      this.byStep.delete(old.step);
      tellOver(old);
    }
    const step: ActiveStep = { session, step: ++this.steps, abandoned: false, deploys, began: Date.now(), settleWaiters: [], overWaiters: [] };
    this.byId.set(session.id, step);
    this.byStep.set(step.step, step);
    return step.step;
  }

  /** A deploy begins: the steps running now are from before it. */
  deployBegan(): void {
    this.beforeDeploy = this.steps;
  }

  /** Whether a deploy began since the Session's step did. */
  deployedSince(session: SessionRecord, deploys: number): boolean {
    const step = this.current(session);
    return step !== undefined && step.deploys !== deploys;
  }

  deactivate(session: SessionRecord | undefined): void {
    const step = session && this.current(session);
    if (!step) return;
    this.byId.delete(session.id);
    this.byStep.delete(step.step);
    tellOver(step);
  }

  has(id: string): boolean {
    return this.byId.has(id);
  }

  get(id: string): SessionRecord | undefined {
    return this.byId.get(id)?.session;
  }

  /** The number of the step this very record is in; undefined once that step is over (or another runs). */
  stepOf(session: SessionRecord): number | undefined {
    return this.current(session)?.step;
  }

  /** The Session record of a step by its number, while that step runs. */
  inStep(step: number): SessionRecord | undefined {
    return this.byStep.get(step)?.session;
  }

  /** Whether this record is the one of its Session's step in progress (not of a step cut and run again). */
  isCurrent(session: SessionRecord): boolean {
    const step = this.current(session);
    return step !== undefined && !step.abandoned;
  }

  /** A token's step while it runs and the token belongs to it (a token without a mark: its Session's step). */
  stepOfToken(msg: unknown): number | undefined {
    const { id, mark } = tokenRef(msg);
    const step = id === undefined ? undefined : this.byId.get(id);
    if (!step || step.abandoned) return undefined;
    return mark === undefined || mark === step.step ? step.step : undefined;
  }

  /** The live Session a token belongs to; undefined when its step is not running (the token is dropped). */
  live(msg: unknown): SessionRecord | undefined {
    const step = this.stepOfToken(msg);
    const session = step === undefined ? undefined : this.byStep.get(step)?.session;
    return session && isLive(session) ? session : undefined;
  }

  /** Why `live` found nothing: the token's step was cut by a deploy (it runs again), or its Session ended. */
  whyDropped(msg: unknown): Dropped {
    const { id, mark } = tokenRef(msg);
    if (mark === undefined) return 'ended';
    const step = this.byStep.get(mark);
    if (step) return step.abandoned ? 'cut' : 'ended';
    // Another step of the Session runs now, or the token's step began before the latest deploy.
    return (id !== undefined && this.byId.has(id)) || mark <= this.beforeDeploy ? 'cut' : 'ended';
  }

  all(): SessionRecord[] {
    return [...this.byId.values()].map((s) => s.session);
  }

  /**
   * The live Session of a step here whose conversation is `key`. A Session may move to another
   * conversation within its step (a team-chat Session whose first post opened its thread): until
   * that step commits, only this record knows it.
   */
  carrying(environment: string, key: string): SessionRecord | undefined {
    for (const { session } of this.byId.values()) {
      if (session.environment === environment && session.key === key && isLive(session)) return session;
    }
    return undefined;
  }

  isAbandoned(session: SessionRecord): boolean {
    return this.current(session)?.abandoned ?? false;
  }

  abandon(session: SessionRecord): void {
    const step = this.current(session);
    if (!step) return;
    step.abandoned = true;
    this.settle(session);
  }

  /**
   * Cuts the steps that began before deploy number `deploys` and still run, but those `spared`
   * keeps: their tokens were in nodes the deploy stopped (a node may drop a message without
   * telling, like a delay node).
   */
  abandonOlderThan(deploys: number, spared: (step: number) => boolean = () => false): SessionRecord[] {
    const cut: SessionRecord[] = [];
    for (const step of this.byId.values()) {
      if (step.deploys < deploys && step.session.state === 'running' && !step.abandoned && !spared(step.step)) {
        step.abandoned = true;
        this.settle(step.session);
        cut.push(step.session);
      }
    }
    return cut;
  }

  /** The numbers of the steps that began before deploy number `deploys` and still run. */
  runningBefore(deploys: number): number[] {
    const found: number[] = [];
    for (const step of this.byId.values()) if (step.deploys < deploys && step.session.state === 'running' && !step.abandoned) found.push(step.step);
    return found;
  }

  /** Whether the token's step began before the latest deploy (its flow may have been closed since). */
  tokenFromBefore(msg: unknown, deploys: number): number | undefined {
    const step = this.stepOfToken(msg);
    const active = step === undefined ? undefined : this.byStep.get(step);
    return active && active.deploys !== deploys ? step : undefined;
  }

  /**
   * The Sessions whose step still runs after `limitMs(session)` since it began: a node kept the
   * token without calling `done()` (or threw), so the step would never settle by itself.
   */
  overdue(now: number, limitMs: (session: SessionRecord) => number): SessionRecord[] {
    const found: SessionRecord[] = [];
    for (const step of this.byId.values()) {
      if (step.session.state === 'running' && !step.abandoned && now - step.began >= limitMs(step.session)) found.push(step.session);
    }
    return found;
  }

  /** Resolves when the Session waits, has ended, or its step was cut. */
  whenSettled(session: SessionRecord): Promise<void> {
    const step = this.current(session);
    if (session.state !== 'running' || !step || step.abandoned) return Promise.resolve();
    return new Promise((resolve) => step.settleWaiters.push(resolve));
  }

  /**
   * Resolves when the Session's step is over: committed (the store has what it did), or left to
   * run again. Later than `whenSettled`, which resolves when the Session waits or ends, before the
   * step's commit.
   */
  whenOver(session: SessionRecord): Promise<void> {
    const step = this.current(session);
    if (!step) return Promise.resolve();
    return new Promise((resolve) => step.overWaiters.push(resolve));
  }

  settle(session: SessionRecord): void {
    const step = this.current(session);
    if (!step) return;
    for (const resolve of step.settleWaiters.splice(0)) resolve();
  }

  private current(session: SessionRecord): ActiveStep | undefined {
    const step = this.byId.get(session.id);
    return step && step.session === session ? step : undefined;
  }
}

/** Whoever waits for the step to be over (`whenOver`) goes on. */
function tellOver(step: ActiveStep): void {
  for (const resolve of step.overWaiters.splice(0)) resolve();
}

/** The Session id and step mark a token carries, if any. */
function tokenRef(msg: unknown): { id?: string; mark?: number } {
  const ref = (msg as { session?: { id?: unknown; [STEP]?: unknown } } | undefined)?.session;
  const id = ref?.id;
  const mark = ref?.[STEP];
  return { id: typeof id === 'string' ? id : undefined, mark: typeof mark === 'number' ? mark : undefined };
}
