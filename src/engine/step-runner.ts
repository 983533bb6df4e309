import type { ItemResult, ReleaseIfLast } from './conversation-worker';
import type { Delivery, DeliveryOutcome, InboundReader } from './delivery';
import { TaskError } from '../model/errors';
import type { IncomingFile } from '../files/intake';
import type { ItemWaiter } from './item-waiters';
import { DIRECT, END, EXPIRE, OUT_START, TEST_START, TIMEOUT } from './item-kinds';
import { isLive, type SessionRecord, type SessionStory } from '../model/session';
import type { InboundMessage } from './starts';
import {
  LeaseLost,
  StoreUnavailable,
  type Claimed,
  type CommitOutcome,
  type InboundItem,
  type Lease,
  type SessionStore,
  type SessionTimer,
} from '../stores/session-store';
import type { SessionOpening } from './session-opening';
import type { StepContext } from './step-context';
import type { TokenLifecycle } from './token-lifecycle';
import { StepCut, type StepJournal } from './effects';
import { runtimeText } from '../model/texts';

/** The longest pause between two tries to save a step the store refused. */
const SAVE_RETRY_MAX_MS = 1000;

type Step = {
  session?: SessionRecord;
  /** What the step sent to providers (effects.ts): the Session it opens works on it too. */
  journal: StepJournal;
  marks: Array<{ key: string; ttlMs: number }>;
  /**
   * The item is not consumed and runs again: the step ended the live Session before its message
   * reached it (the end is committed alone), or a Session moving to its conversation was in another
   * step (nothing else is committed).
   */
  again?: boolean;
};

/**
 * One step of a conversation: its oldest recorded item is handled (a message continues the live
 * Session or opens one, a timer fires, an end is asked for) up to the Session's next wait or end,
 * and the result is committed in one write with the item it consumed.
 */
export class StepRunner {
  constructor(
    private readonly ctx: StepContext,
    private readonly opening: SessionOpening,
    private readonly tokens: TokenLifecycle,
  ) {}

  /** The Channel's module finishes what it writes to a shared store for the step (a voice call's verbs). */
  private async beforeCommit(session: SessionRecord): Promise<void> {
    let behaviour;
    try {
      behaviour = this.ctx.registry.behaviourOf(session);
    } catch {
      return; // no module for this Channel: nothing to finish
    }
    await behaviour.beforeCommit?.(session);
  }

  /** One step: the item is handled up to the Session's next wait or end, then committed at once. */
  /** One step: the item handled and committed, or left recorded to run again ('retry'); counted and timed for the metrics. */
  async handleItem(store: SessionStore, item: InboundItem, lease: Lease, releaseIfLast?: ReleaseIfLast, read?: Claimed['live']): Promise<ItemResult> {
    const began = performance.now();
    let result: ItemResult;
    let journal: StepJournal | undefined;
    try {
      // A step that runs again reads what it sent before (once, here, unless its hand-out brought it).
      journal = await this.ctx.effects.begin(store, item, lease);
    } catch (err) {
      this.ctx.health.failed(store, err);
    }
    if (journal) {
      result = await this.handleItemUntimed(store, item, lease, journal, releaseIfLast, read);
      this.ctx.effects.end(item, journal, result === 'committed');
    } else result = 'retry';
    this.ctx.metrics.step(item.kind, result, (performance.now() - began) / 1000);
    return result;
  }

  private async handleItemUntimed(
    store: SessionStore,
    item: InboundItem,
    lease: Lease,
    journal: StepJournal,
    releaseIfLast?: ReleaseIfLast,
    read?: Claimed['live'],
  ): Promise<ItemResult> {
    const waiter = this.ctx.waiters.get(store, item.seq);
    const deploysBefore = this.ctx.deploys();
    let live: SessionRecord | undefined;
    try {
      live = read ? read.session : await store.liveSession(item);
    } catch (err) {
      this.ctx.health.failed(store, err);
      return 'retry';
    }
    const step: Step = { session: live, marks: [], journal };
    if (live) {
      this.ctx.active.activate(live, this.ctx.deploys());
      this.ctx.effects.bind(live, journal);
    }
    let outcome: DeliveryOutcome;
    try {
      outcome = await this.runItem(store, item, live, step, waiter);
    } catch (err) {
      if (err instanceof StoreUnavailable) {
        this.ctx.health.failed(store, err);
        this.release(step.session);
        return 'retry';
      }
      if (err instanceof StepCut) {
        // An item's reader found its step cut (another instance took the conversation): it runs there.
        this.release(step.session);
        return 'retry';
      }
      const said = { seq: item.seq, conversation: item.conversation, message: (err as Error).message };
      this.ctx.red.log.error(`[channel-sessions] ${runtimeText(this.ctx.red, 'core', 'runtime.log.itemFailed', said)}`);
      outcome = { kind: 'ignored' };
    }
    const session = step.session;
    if (!session && outcome.kind === 'refused' && (!this.ctx.flowsRunning() || this.ctx.deploys() !== deploysBefore)) {
      // A deploy began while this step looked for its start (the starts were closing): the item
      // stays recorded and is handled once the new flows run, instead of being refused for good.
      return 'retry';
    }
    if (session && this.ctx.active.isAbandoned(session)) {
      // A deploy or stop cut the flow: the item stays recorded and its step runs again afterwards.
      this.release(session);
      return 'retry';
    }
    if (session?.state === 'running') {
      // The step handed the token on without settling (should not happen): keep it running, as before.
      this.ctx.red.log.warn(`[channel-sessions] ${runtimeText(this.ctx.red, 'core', 'runtime.log.leftRunning', { session: session.id })}`);
    }
    if (session) {
      try {
        await this.beforeCommit(session);
      } catch (err) {
        // What the Channel keeps for the step (a call's verbs) is not all there: run it again.
        this.release(session);
        this.ctx.health.failed(store, err);
        return 'retry';
      }
    }
    // The worker lets go of the conversation after the step when nothing else waits; a store that
    // can does it in the commit's own call (one round trip less to a shared store).
    let committed: CommitOutcome;
    // Every commit of a waiting Session arms its timers anew, whatever the item did: that is what
    // arms an expiry that fired early again (EXPIRE in runItem). The wake-up below is the earliest.
    const timers = session && session.state === 'waiting' ? this.timersOf(session) : undefined;
    // The commit of an end removes the history and log with the Session: what the Sessions view
    // shows of them afterwards is read before it (once per Session, not per step; in the commit's
    // own attempt, as a Session whose variables cannot be saved ends only there).
    let endStory: SessionStory | undefined;
    const commit = async () => {
      if (session && !isLive(session) && !endStory) {
        endStory = await this.ctx.storyOf(session).catch(() => ({ history: session.newHistory ?? [], log: session.newLog ?? [] }));
      }
      committed = await store.commit({
        lease,
        consumed: step.again ? undefined : item.seq,
        session,
        timers,
        marks: step.marks,
        releaseIfIdle: releaseIfLast !== undefined,
        // The journal goes with the step (with its item, or alone when the item runs again as a new step).
        ...(journal.held ? { journal: item.seq } : {}),
      });
    };
    if (!(await this.save(store, item, session, commit))) {
      this.release(session);
      return 'retry';
    }
    this.ctx.health.recovered(store);
    this.release(session);
    if (session) {
      // in the store now
      session.newHistory = undefined;
      session.newLog = undefined;
    }
    if (session && !isLive(session)) this.afterEnd(session, endStory ?? { history: [], log: [] });
    if (timers) this.ctx.wakeAt(Math.min(...timers.map((t) => t.due)));
    this.ctx.countsChanged();
    await releaseIfLast?.(committed);
    // Not consumed: its waiter hears when the item's own step has run.
    if (!step.again) this.ctx.waiters.done(store, item.seq, outcome);
    return 'committed';
  }

  /**
   * The step has run and its replies are out, so a store fault must not make it run (and reply)
   * again: the same commit, which is idempotent, is tried until the store takes it. Given up (false)
   * only when another instance took the conversation, or the flows stop or a deploy cut the
   * Session: the step then runs again from its recorded item (the at-least-once rule).
   */
  private async save(store: SessionStore, item: InboundItem, session: SessionRecord | undefined, commit: () => Promise<void>): Promise<boolean> {
    for (let attempt = 0; ; attempt++) {
      try {
        await commit();
        return true;
      } catch (err) {
        if (err instanceof LeaseLost) {
          const said = { conversation: item.conversation, message: err.message };
          this.ctx.red.log.warn(`[channel-sessions] ${runtimeText(this.ctx.red, 'core', 'runtime.log.leaseLost', said)}`);
          return false;
        }
        // Checked only after a failure, so a normal step does not serialise its Session twice.
        if (session && !savable(session)) {
          this.endUnsavable(session);
          continue;
        }
        this.ctx.health.failed(store, err);
        if (!this.ctx.flowsRunning() || (session && this.ctx.active.isAbandoned(session))) return false;
        await new Promise((resolve) => setTimeout(resolve, Math.min(SAVE_RETRY_MAX_MS, 50 * 2 ** attempt)));
      }
    }
  }

  /**
   * A flow put a value into the variables that JSON cannot hold (a BigInt, a cycle): the flow's
   * fault, not the store's. The Session ends with 4001 and a JSON-safe copy of its variables, so
   * neither its conversation nor the other Sessions on the store are held up by it.
   */
  private endUnsavable(session: SessionRecord): void {
    let reason = 'unknown';
    try {
      JSON.stringify(session);
    } catch (err) {
      reason = (err as Error).message;
    }
    session.vars = jsonSafe(session.vars) as Record<string, unknown>;
    // Said once, in the runtime's language, for the log line and the Session's own log and end reason.
    const message = runtimeText(this.ctx.red, 'core', 'runtime.log.unsavable', { reason });
    this.ctx.red.log.error(`[channel-sessions] ${runtimeText(this.ctx.red, 'core', 'runtime.log.moduleException', { session: session.id, message })}`);
    this.ctx.journal.addLog(session, { level: 'error', code: 4001, message });
    session.error = { code: 4001, name: 'ModuleException', message };
    session.state = 'ended';
    session.endReason = `4001 ModuleException: ${message}`;
    session.waitingAt = undefined;
    this.ctx.journal.changed(session);
  }

  private async runItem(
    store: SessionStore,
    item: InboundItem,
    live: SessionRecord | undefined,
    step: Step,
    waiter: ItemWaiter | undefined,
  ): Promise<DeliveryOutcome> {
    if (!live && (await this.awaitSessionMovingIn(item))) {
      // Not consumed: the item runs again in a step of its own, which reads the Session moved here.
      step.again = true;
      return { kind: 'ignored' };
    }
    const payload = (item.payload ?? {}) as Record<string, any>;
    const ours = (s: SessionRecord | undefined): s is SessionRecord => s !== undefined && s.id === payload.sessionId && isLive(s);
    switch (item.kind) {
      case TIMEOUT: {
        if (!ours(live) || live.state !== 'waiting' || live.waitingAt?.since !== payload.wait?.since) return { kind: 'ignored' };
        const waiting = this.ctx.registry.waitingNodes.get(live.waitingAt?.nodeId ?? '');
        if (!waiting?.timedOut) return { kind: 'ignored' };
        this.tokens.leaveWait(live);
        const held = this.tokens.hold(live);
        try {
          await waiting.timedOut(live, this.tokens.token(live));
        } finally {
          this.ctx.tracker.release(held);
        }
        await this.ctx.active.whenSettled(live);
        return { kind: 'continued', session: live };
      }
      case EXPIRE: {
        if (!ours(live) || live.state !== 'waiting') return { kind: 'ignored' };
        const seconds = this.ctx.idleSeconds(live.channel);
        const armedAt = payload.wait?.lastActivity;
        if (live.lastActivity !== armedAt) {
          // The Session had a message after this expiry was armed. A store may leave an armed
          // expiry where it is rather than move it later at every step (the SQLite store does:
          // moving it rewrites its place in the index of due timers at every message), so this
          // one fired early. Unless the Session has been idle long enough since, the step arms
          // the expiry again at its real due: the step commits the live Session as it is, and the
          // commit of a waiting Session carries its timers (`timersOf`); nothing is said, sent or
          // written to its history, and it waits where it was.
          // One armed at a later activity than the Session's (or at none) is not from its idle
          // time: ignored, as before (the commit arms the Session's own expiry all the same).
          const notFromIdleTime = typeof armedAt !== 'number' || live.lastActivity < armedAt;
          if (notFromIdleTime || live.lastActivity + seconds * 1000 > Date.now()) return { kind: 'ignored' };
        }
        await this.tokens.endNow(live, `Session expired after ${seconds} s without a message; its conversation is released`);
        return { kind: 'ignored' };
      }
      case END: {
        if (!ours(live)) return { kind: 'ignored' };
        await this.tokens.endNow(live, String(payload.reason ?? 'Ended'));
        return { kind: 'ignored' };
      }
      case TEST_START:
        return this.opening.openForTest(item, step, waiter);
      case OUT_START:
        return this.opening.openAtOutNode(store, item, live, step, waiter);
      default: {
        const reader = item.kind === DIRECT ? directReader : this.ctx.registry.readers.get(item.kind);
        if (!reader) {
          this.ctx.red.log.warn(`[channel-sessions] ${runtimeText(this.ctx.red, 'core', 'runtime.log.noReader', { kind: item.kind })}`);
          return { kind: 'ignored' };
        }
        const delivery = await reader(item, live);
        if (!delivery) return { kind: 'ignored' };
        step.marks.push(...(delivery.marks ?? []));
        const outcome = await this.deliverStep(store, item, delivery, live, step, waiter);
        if (outcome.kind === 'started' || outcome.kind === 'continued') step.marks.push(...(delivery.marksWhenHandled ?? []));
        return outcome;
      }
    }
  }

  /**
   * A Session may move to this conversation within a step of another one (a team-chat Session
   * whose first post opened its thread takes the thread's key), and the store has it here only
   * once that step commits. An item of this conversation handled before then finds no Session in
   * the store: a reply is dropped, or a message opens a second Session that the commit then
   * replaces. So when a step here carries the key, the item waits until that step is over
   * (committed, not only settled) and true says to run it again. Only a step of this process is
   * seen: another instance's step keeps the new key in its own memory until its commit, and no
   * store records where a Session is moving.
   */
  private async awaitSessionMovingIn(item: InboundItem): Promise<boolean> {
    const moving = this.ctx.active.carrying(item.environment, item.conversation);
    if (!moving) return false;
    await this.ctx.active.whenOver(moving);
    return true;
  }

  private async deliverStep(
    store: SessionStore,
    item: InboundItem,
    delivery: Delivery,
    live: SessionRecord | undefined,
    step: Step,
    waiter: ItemWaiter | undefined,
  ): Promise<DeliveryOutcome> {
    if (live && delivery.startOnly) {
      waiter?.opened({ kind: 'existing', session: live });
      return { kind: 'existing', session: live };
    }
    if (live) {
      live.lastActivity = Date.now();
      waiter?.opened({ kind: 'continued', session: live });
      if (await this.continueSession(live, delivery.message)) return { kind: 'continued', session: live };
      if (!isLive(live) && delivery.mayStart) {
        // Its waiting node is gone (a deploy removed it, and this message came first): that end is
        // this step's commit, and the message runs again as a step of its own, which starts a new
        // Session. Opened here, the new one would take the step's commit and the end be lost.
        step.again = true;
        return { kind: 'ignored' };
      }
    }
    if (!delivery.mayStart) return delivery.notStarted ? { kind: 'refused', reason: delivery.notStarted } : { kind: 'ignored' };
    const env = this.ctx.environment(item.environment);
    if (!env) return { kind: 'refused', reason: `Environment ${item.environment} is not deployed` };
    return this.opening.openAtStart(store, env, item, delivery, step, waiter);
  }

  private async continueSession(session: SessionRecord, message: InboundMessage): Promise<boolean> {
    const waitPoint = session.waitingAt;
    if (!waitPoint || session.state !== 'waiting') return false;
    const waiting = this.ctx.registry.waitingNodes.get(waitPoint.nodeId);
    if (!waiting) {
      await this.tokens.endAtRemovedNode(session);
      return false;
    }
    this.tokens.leaveWait(session);
    if (!waitPoint.opening && !message.notSaid) {
      const names = message.files.map((f) => f.name);
      this.ctx.journal.addHistory(session, { from: 'user', text: message.said ?? message.text, ...(names.length ? { files: names } : {}) });
    }
    const token = this.tokens.token(session, message.text);
    const held = this.tokens.hold(session);
    try {
      await waiting.resume(session, message, token);
    } catch (err) {
      await this.tokens.fail(session, err instanceof TaskError ? err : new TaskError(4001, (err as Error).message), waitPoint.nodeId);
      return true;
    } finally {
      this.ctx.tracker.release(held);
    }
    await this.ctx.active.whenSettled(session);
    return true;
  }

  /** After the end was committed: what the Session held is freed. */
  private afterEnd(session: SessionRecord, story: SessionStory): void {
    this.ctx.ended(session, story);
    this.ctx.registry.sessionEnded(session);
    void this.ctx.files.forget(session.id).catch(() => undefined);
  }

  /** The step is over (committed or to be tried again): its Session leaves memory. */
  private release(session: SessionRecord | undefined): void {
    const step = session && this.ctx.active.stepOf(session);
    if (step === undefined) return;
    this.ctx.active.deactivate(session);
    this.ctx.tracker.forget(step);
  }

  /** The InputTask timeout of the wait (unless the Channel times it), and the idle expiry. */
  timersOf(session: SessionRecord): SessionTimer[] {
    const timers: SessionTimer[] = [];
    const at = session.waitingAt;
    const waiting = at ? this.ctx.registry.waitingNodes.get(at.nodeId) : undefined;
    const seconds = waiting?.timeoutSeconds ?? 0;
    if (at && seconds > 0 && waiting?.timedOut && !this.timesNoReply(session))
      timers.push({ kind: 'timeout', due: at.since + seconds * 1000, payload: { since: at.since } });
    timers.push({ kind: 'expire', due: session.lastActivity + this.ctx.idleSeconds(session.channel) * 1000, payload: { lastActivity: session.lastActivity } });
    return timers;
  }

  /**
   * Whether the Session's Channel times an InputTask's "no reply after" itself: a timer armed at the
   * commit would run while the person cannot answer yet (a call still playing what comes first).
   */
  private timesNoReply(session: SessionRecord): boolean {
    try {
      return this.ctx.registry.behaviourOf(session).timesNoReply === true;
    } catch {
      return false; // no module for this Channel: the engine times it
    }
  }
}

/** The test chat's own messages carry their Delivery, the bytes of their files as base64 (the item is kept in a durable store). */
const directReader: InboundReader = async (item) => {
  const delivery = item.payload as Delivery;
  const files = (delivery.message.files as unknown as Array<Omit<IncomingFile, 'fetch'> & { data?: string }>).map(({ data, ...file }) => ({
    ...file,
    fetch: async () => (data === undefined ? Promise.reject(new Error(file.skipReason ?? 'not kept')) : Buffer.from(data, 'base64')),
  }));
  return { ...delivery, message: { ...delivery.message, files } };
};

function savable(session: SessionRecord): boolean {
  try {
    JSON.stringify(session);
    return true;
  } catch {
    return false;
  }
}

/** Values JSON cannot hold become text (BigInt) or are dropped (a cycle, at the point it closes). */
function jsonSafe(value: unknown): unknown {
  const seen = new WeakSet<object>();
  return JSON.parse(
    JSON.stringify(value ?? {}, (_key, v: unknown) => {
      if (typeof v === 'bigint') return v.toString();
      if (typeof v === 'object' && v !== null) {
        if (seen.has(v)) return undefined;
        seen.add(v);
      }
      return v;
    }),
  );
}
