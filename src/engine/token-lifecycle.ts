import { STEP } from './active-sessions';
import type { TaskError, TaskErrorInfo } from '../model/errors';
import type { RED, RedNode } from '../model/red';
import { isLive, type SessionRecord, type TokenMessage } from '../model/session';
import { dropOpeningAnswer } from './opening-answer';
import type { StepContext } from './step-context';
import { runtimeText } from '../model/texts';

/**
 * A step's token from the moment it is made until the step settles: it is marked with its step,
 * held while a waiting node resumes, and settles where a node waits, where the Session completes
 * or ends, or where it stopped moving (then the Session ends, unless a deploy cut the step).
 */
export class TokenLifecycle {
  constructor(private readonly ctx: StepContext) {}

  /** A token of the Session's step in progress, marked with that step (see `STEP`). */
  token(session: SessionRecord, payload?: unknown): TokenMessage {
    const token = this.ctx.journal.token(session, payload);
    const step = this.ctx.active.stepOf(session);
    if (step !== undefined) Object.assign(token.session, { [STEP]: step });
    return token;
  }

  /** The engine holds the step's token itself while a waiting node resumes; returns the step to release. */
  hold(session: SessionRecord): number {
    const step = this.ctx.active.stepOf(session) ?? 0;
    this.ctx.tracker.hold(step);
    return step;
  }

  /** The Session leaves its wait: its token runs again. */
  leaveWait(session: SessionRecord): void {
    session.waitingAt = undefined;
    session.state = 'running';
    session.lastActivity = Date.now();
    this.ctx.journal.changed(session);
  }

  /** The token reached a node that waits: the step ends here and is committed with the variables. */
  async wait(session: SessionRecord, msg: TokenMessage, node: RedNode, opening = false): Promise<void> {
    // A token of a step a deploy cut (its item runs again) waits nowhere.
    if (!isLive(session) || !this.ctx.active.isCurrent(session)) return;
    session.vars = msg.vars ?? session.vars;
    dropOpeningAnswer(session);
    session.waitingAt = { nodeId: node.id, nodeType: node.type, since: Date.now(), ...(opening ? { opening } : {}) };
    session.state = 'waiting';
    this.ctx.journal.changed(session);
    this.ctx.active.settle(session);
  }

  /** EndTask: the Session is completed and its conversation released. */
  complete(session: SessionRecord, msg?: TokenMessage): Promise<void> {
    if (!this.ctx.active.isCurrent(session)) return Promise.resolve();
    if (msg?.vars) session.vars = msg.vars;
    return this.finish(session, 'completed', 'EndTask reached');
  }

  /** An error nobody handles on the error branch ends the Session; the log keeps it. */
  fail(session: SessionRecord, error: TaskError, nodeId?: string): Promise<void> {
    if (!this.ctx.active.isCurrent(session)) return Promise.resolve();
    session.error = error.toInfo();
    this.ctx.journal.addLog(session, { level: 'error', code: error.code, message: error.message, nodeId });
    return this.finish(session, 'ended', `${error.code} ${error.codeName}: ${error.message}`);
  }

  /** An error a Task sent down its error branch: logged, the Session goes on. */
  recordError(session: SessionRecord, error: TaskErrorInfo, nodeId: string): void {
    this.ctx.journal.addLog(session, { level: 'error', code: error.code, message: error.message, nodeId, handled: true });
  }

  /** The Session waits at a node a deploy removed: it ends there. */
  endAtRemovedNode(session: SessionRecord): Promise<void> {
    const at = session.waitingAt;
    const reason = nodeRemoved(this.ctx.red, session.id, at);
    this.ctx.red.log.warn(`[channel-sessions] ${reason}`);
    return this.endNow(session, reason);
  }

  /**
   * A step whose token never settled (a node kept it without calling `done()`, or threw) would hold
   * its conversation for ever: at the Channel's idle timeout after it began, the Session ends, the
   * step commits that end, and the messages waiting behind it are handled.
   */
  endOverdueSteps(now = Date.now()): void {
    for (const session of this.ctx.active.overdue(now, (s) => this.ctx.idleSeconds(s.channel) * 1000)) {
      const seconds = this.ctx.idleSeconds(session.channel);
      const reason = runtimeText(this.ctx.red, 'core', 'runtime.log.stepOverdue', { session: session.id, seconds });
      this.ctx.red.log.warn(`[channel-sessions] ${reason}`);
      void this.endNow(session, reason);
    }
  }

  /** Ends a Session inside its step. */
  endNow(session: SessionRecord, reason: string): Promise<void> {
    this.ctx.journal.addLog(session, { level: 'info', message: reason });
    return this.finish(session, 'ended', reason);
  }

  private async finish(session: SessionRecord, state: 'completed' | 'ended', reason: string): Promise<void> {
    // A token of a step a deploy cut (its Session's item runs again) ends nothing.
    if (!isLive(session) || !this.ctx.active.isCurrent(session)) return;
    session.state = state;
    session.endReason = reason;
    session.waitingAt = undefined;
    session.lastActivity = Date.now();
    this.ctx.tracker.forget(this.ctx.active.stepOf(session) ?? 0);
    this.ctx.journal.changed(session);
    this.ctx.active.settle(session);
  }

  /**
   * A step's token stopped moving: the Session ends, unless the flows are restarting (then the
   * step runs again). A token of a step that is over (cut by a deploy, its item run again since)
   * finds no step here: its stop in the closed flow is that cut, and ends nothing.
   */
  tokenStopped(step: number): void {
    const session = this.ctx.active.inStep(step);
    if (!session || session.state !== 'running' || this.ctx.active.isAbandoned(session)) return;
    // A deploy stopped the nodes the token was in: the step runs again from its recorded item.
    if (!this.ctx.flowsRunning() || this.ctx.active.deployedSince(session, this.ctx.deploys())) {
      this.ctx.active.abandon(session);
      return;
    }
    const reason = 'The flow stopped without reaching an EndTask or a wait; the Session ended';
    this.ctx.journal.addLog(session, { level: 'info', message: reason });
    void this.finish(session, 'ended', reason);
  }
}

/** Why a Session ended at a node a deploy removed: the log line, the Session's log and its end reason. */
export function nodeRemoved(red: RED, sessionId: string, at: SessionRecord['waitingAt']): string {
  const type = at?.nodeType ?? runtimeText(red, 'core', 'runtime.log.aNode');
  return runtimeText(red, 'core', 'runtime.log.nodeRemoved', { session: sessionId, type, node: String(at?.nodeId) });
}
