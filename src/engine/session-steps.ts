import { randomBytes } from 'node:crypto';
import { STEP, type ActiveSessions } from './active-sessions';
import { CHANNEL_WORDS, TEST_CHANNEL, type ChannelName } from '../model/channels';
import type { ItemResult, ReleaseIfLast } from './conversation-worker';
import type { Delivery, DeliveryOutcome, InboundReader } from './delivery';
import { TaskError, type TaskErrorInfo } from '../model/errors';
import type { FileStore } from '../files/file-store';
import { receiveFiles, type IncomingFile } from '../files/intake';
import { fileList, type FileList } from '../files/file-values';
import type { ItemWaiter, ItemWaiters } from './item-waiters';
import { DIRECT, END, EXPIRE, OUT_START, TEST_START, TIMEOUT } from './item-kinds';
import type { Journal } from './journal';
import { dropOpeningAnswer, holdOpeningAnswer } from './opening-answer';
import type { RED, RedNode } from '../model/red';
import type { Registry, WaitingNode } from './registry';
import { SESSION_FORMAT, isLive, type SessionRecord, type SessionStory, type TokenMessage } from '../model/session';
import { chooseStart, type InboundMessage, type Opening, type StartRegistration } from './starts';
import type { StoreHealth } from './store-health';
import type { Metrics } from './metrics';
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
import type { TokenTracker } from './token-tracker';
import { runtimeText } from '../model/texts';

/**
 * What an out node records (plain JSON: it is read back after a restart): the Session to open at
 * the node, in the conversation the item is recorded in. Its output 1 then runs on as a start's.
 */
export interface OutStart {
  /** The out node (registered as a start whose kind is `outbound`). */
  nodeId: string;
  channel: ChannelName;
  /** Channel data the Session keeps (where to reply). */
  binding: Record<string, unknown>;
  /** The start variable and who talks to whom, as a start's opening. */
  opening: Pick<Opening, 'value' | 'text' | 'sender' | 'recipient'>;
  /** The Session's first variables (`msg.vars` of the message that reached the node). */
  vars?: Record<string, unknown>;
}

/** An Environment as the steps need it. */
export interface StepEnvironment {
  attachment: { id: string; name: string; maxSessions: number };
}

/** What a step needs of the rest of the engine. */
export interface StepContext {
  red: RED;
  files: FileStore;
  journal: Journal;
  registry: Registry;
  active: ActiveSessions;
  tracker: TokenTracker;
  waiters: ItemWaiters;
  health: StoreHealth;
  /** Each step counted and timed. */
  metrics: Metrics;
  environment(id: string): StepEnvironment | undefined;
  orderOf(processId: string): number;
  idleSeconds(channel: ChannelName): number;
  flowsRunning(): boolean;
  /** How many deploys (flows stopping) this runtime has seen. */
  deploys(): number;
  /** A start waits for the test chat's opening message. */
  registerWaitingNode(waiting: WaitingNode): void;
  /** A Session's whole history and log: what its store keeps and the step's lines not yet committed. */
  storyOf(session: SessionRecord): Promise<SessionStory>;
  /** A Session that ended was committed: kept for the Sessions view a while, with its history and log as they were at the end. */
  ended(session: SessionRecord, story: SessionStory): void;
  wakeAt(due: number): void;
  countsChanged(): void;
}

/** The longest pause between two tries to save a step the store refused. */
const SAVE_RETRY_MAX_MS = 1000;

type Step = {
  session?: SessionRecord;
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
export class SessionSteps {
  constructor(private readonly ctx: StepContext) {}

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
    const result = await this.handleItemUntimed(store, item, lease, releaseIfLast, read);
    this.ctx.metrics.step(item.kind, result, (performance.now() - began) / 1000);
    return result;
  }

  private async handleItemUntimed(
    store: SessionStore,
    item: InboundItem,
    lease: Lease,
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
    const step: Step = { session: live, marks: [] };
    if (live) this.ctx.active.activate(live, this.ctx.deploys());
    let outcome: DeliveryOutcome;
    try {
      outcome = await this.runItem(store, item, live, step, waiter);
    } catch (err) {
      if (err instanceof StoreUnavailable) {
        this.ctx.health.failed(store, err);
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
        this.leaveWait(live);
        const held = this.hold(live);
        try {
          await waiting.timedOut(live, this.token(live));
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
        await this.endNow(live, `Session expired after ${seconds} s without a message; its conversation is released`);
        return { kind: 'ignored' };
      }
      case END: {
        if (!ours(live)) return { kind: 'ignored' };
        await this.endNow(live, String(payload.reason ?? 'Ended'));
        return { kind: 'ignored' };
      }
      case TEST_START:
        return this.testStartStep(item, step, waiter);
      case OUT_START:
        return this.outStartStep(store, item, live, step, waiter);
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
    return this.open(store, env, item, delivery, step, waiter);
  }

  private async open(
    store: SessionStore,
    env: StepEnvironment,
    item: InboundItem,
    delivery: Delivery,
    step: { session?: SessionRecord },
    waiter: ItemWaiter | undefined,
  ): Promise<DeliveryOutcome> {
    const moduleKey = this.ctx.registry.moduleKeyOf(delivery.channel);
    const name = env.attachment.name || env.attachment.id;
    if (delivery.startAt) {
      const at = this.ctx.registry.starts.get(delivery.startAt);
      if (!at || at.environment !== item.environment) {
        const reason = runtimeText(this.ctx.red, 'core', 'runtime.log.startGone', { node: delivery.startAt, name });
        this.ctx.red.log.warn(`[channel-sessions] ${reason}`);
        return { kind: 'refused', reason };
      }
    }
    const start = delivery.startAt
      ? this.ctx.registry.starts.get(delivery.startAt)
      : chooseStart([...this.ctx.registry.starts.values()], item.environment, delivery.channel, moduleKey, (p) => this.ctx.orderOf(p));
    if (!start) {
      const reason = runtimeText(this.ctx.red, 'core', 'runtime.log.noStart', { name, channel: delivery.channel });
      this.ctx.red.log.warn(`[channel-sessions] ${reason}`);
      return { kind: 'refused', reason };
    }
    const full = await this.limitReached(store, env, start);
    if (full) return { kind: 'refused', reason: full };
    const session = this.createSession({
      channel: delivery.channel,
      environment: item.environment,
      process: start.node.z ?? '',
      key: item.conversation,
      isTest: false,
      binding: delivery.binding ?? {},
      ...(delivery.person ? { person: delivery.person } : {}),
    });
    step.session = session;
    this.ctx.active.activate(session, this.ctx.deploys());
    waiter?.opened({ kind: 'started', session });
    const files = delivery.keepOpeningFiles === false ? fileList([]) : await this.keepFiles(session, delivery.message.files, start.node.id);
    const opening = delivery.opening
      ? delivery.opening(session, files)
      : { text: delivery.message.text, files: files.count ? files.names.split(', ') : undefined };
    this.begin(start, session, opening);
    await this.ctx.active.whenSettled(session);
    return { kind: 'started', session };
  }

  /**
   * maxSessions reached: why no Session may open at the start, said in the log and on the start;
   * undefined while one may. Also asked by a node before it sends what needs a Session (Engine.limitReached).
   */
  async limitReached(store: SessionStore, env: StepEnvironment, start: StartRegistration): Promise<string | undefined> {
    const limit = env.attachment.maxSessions;
    if (limit <= 0 || (await store.count({ environment: env.attachment.id })) < limit) return undefined;
    const reason = runtimeText(this.ctx.red, 'core', 'runtime.log.limitReached', { name: env.attachment.name || env.attachment.id, limit });
    this.ctx.red.log.warn(`[channel-sessions] ${reason}`);
    start.node.status({ fill: 'red', shape: 'ring', text: runtimeText(this.ctx.red, 'core', 'runtime.status.limitReached', { limit }) });
    return reason;
  }

  /**
   * An out node's request: when the conversation has a live Session it is left alone ('existing',
   * the node's error branch says so); otherwise a Session opens at the node with the request's
   * first variables, and the flow runs on from its output 1 as from a start.
   */
  private async outStartStep(
    store: SessionStore,
    item: InboundItem,
    live: SessionRecord | undefined,
    step: { session?: SessionRecord },
    waiter: ItemWaiter | undefined,
  ): Promise<DeliveryOutcome> {
    const request = item.payload as OutStart;
    if (live) {
      waiter?.opened({ kind: 'existing', session: live });
      return { kind: 'existing', session: live };
    }
    const env = this.ctx.environment(item.environment);
    if (!env) return { kind: 'refused', reason: `Environment ${item.environment} is not deployed` };
    const start = this.ctx.registry.starts.get(request.nodeId);
    if (!start?.kind.outbound) return { kind: 'refused', reason: `The out node ${request.nodeId} is not deployed; the Session did not start` };
    const full = await this.limitReached(store, env, start);
    if (full) return { kind: 'refused', reason: full };
    const session = this.createSession({
      channel: request.channel,
      environment: item.environment,
      process: start.node.z ?? '',
      key: item.conversation,
      isTest: false,
      binding: request.binding ?? {},
    });
    if (request.vars && typeof request.vars === 'object' && !Array.isArray(request.vars)) session.vars = { ...request.vars };
    step.session = session;
    this.ctx.active.activate(session, this.ctx.deploys());
    waiter?.opened({ kind: 'started', session });
    this.begin(start, session, { ...request.opening, text: request.opening.text ?? '' });
    await this.ctx.active.whenSettled(session);
    return { kind: 'started', session };
  }

  private async testStartStep(item: InboundItem, step: { session?: SessionRecord }, waiter: ItemWaiter | undefined): Promise<DeliveryOutcome> {
    const { startNodeId, testData, sessionId, channel, from } = item.payload as {
      startNodeId: string;
      testData: Record<string, unknown>;
      sessionId: string;
      channel?: ChannelName;
      from?: string;
    };
    const start = this.ctx.registry.starts.get(startNodeId);
    if (!start) return { kind: 'refused', reason: `There is no deployed start node ${startNodeId}` };
    const data = { ...start.testData, ...(testData ?? {}) };
    const session = this.createSession(
      {
        channel: channel ?? TEST_CHANNEL,
        environment: item.environment,
        process: start.node.z ?? '',
        key: item.conversation,
        isTest: true,
        binding: { testData: data, ...(from ? { openedFrom: from } : {}) },
      },
      sessionId,
    );
    step.session = session;
    this.ctx.active.activate(session, this.ctx.deploys());
    waiter?.opened({ kind: 'started', session });
    const opening = start.kind.testOpening ? start.kind.testOpening(data, session.channel) : { text: '' };
    if (opening) this.begin(start, session, opening);
    else this.waitForOpening(start, session);
    await this.ctx.active.whenSettled(session);
    return { kind: 'started', session };
  }

  private begin(start: StartRegistration, session: SessionRecord, opening: Opening): void {
    session.vars.execution = {
      channel: session.channel,
      channelName: CHANNEL_WORDS[session.channel] ?? session.channel,
      channelSender: opening.sender ?? '',
      channelRecipient: opening.recipient ?? '',
      sessionId: session.id,
    };
    // An out node's text is what the flow is about to send, not something the person said.
    if (!start.kind.outbound && (opening.text || opening.files?.length)) {
      this.ctx.journal.addHistory(session, { from: 'user', text: opening.text, ...(opening.files?.length ? { files: opening.files } : {}) });
    }
    if (opening.vars) session.vars = { ...opening.vars, execution: session.vars.execution };
    const token = this.token(session, opening.text);
    // An out node opens a Session on the Channel its request names (Text out: SMS or WhatsApp).
    const wrongChannel = start.kind.channel !== null && !start.kind.outbound && !session.isTest && start.kind.channel !== session.channel;
    if (wrongChannel) {
      const error = new TaskError(8025, `This start serves ${start.kind.channel}; the Session came on ${session.channel} and ends`);
      start.node.error(error, { ...token, error: error.toInfo() });
      void this.fail(session, error, start.node.id);
      return;
    }
    if (start.kind.channel !== null && opening.value) session.vars[start.variable || 'variable'] = opening.value;
    if (start.kind.channel === null && opening.answersFirstInput) holdOpeningAnswer(session, opening.answersFirstInput);
    if (opening.waits) {
      void this.wait(session, token, start.node);
      return;
    }
    start.node.status({
      fill: 'green',
      shape: 'dot',
      text: runtimeText(this.ctx.red, 'core', 'runtime.status.started', { time: new Date().toLocaleTimeString() }),
    });
    if (opening.fields) Object.assign(token, opening.fields);
    if (opening.output) {
      const outputs: unknown[] = [];
      outputs[opening.output] = token;
      start.node.send(outputs);
    } else start.node.send(token);
    this.ctx.tracker.check(this.ctx.active.stepOf(session) ?? 0);
  }

  private waitForOpening(start: StartRegistration, session: SessionRecord): void {
    this.ctx.journal.addHistory(session, { from: 'bot', kind: 'prompt', text: runtimeText(this.ctx.red, 'core', 'runtime.chat.typeOpening') });
    this.ctx.registerWaitingNode({
      node: start.node,
      resume: async (s, message) => {
        const files = await this.keepFiles(s, message.files, start.node.id);
        const testData = (s.binding.testData ?? {}) as Record<string, unknown>;
        const opening = start.kind.testOpeningFromMessage
          ? start.kind.testOpeningFromMessage(testData, message.text, files, s.channel)
          : { text: message.text };
        this.begin(start, s, opening);
      },
    });
    void this.wait(session, this.token(session), start.node, true);
  }

  private async continueSession(session: SessionRecord, message: InboundMessage): Promise<boolean> {
    const waitPoint = session.waitingAt;
    if (!waitPoint || session.state !== 'waiting') return false;
    const waiting = this.ctx.registry.waitingNodes.get(waitPoint.nodeId);
    if (!waiting) {
      await this.endAtRemovedNode(session);
      return false;
    }
    this.leaveWait(session);
    if (!waitPoint.opening && !message.notSaid) {
      const names = message.files.map((f) => f.name);
      this.ctx.journal.addHistory(session, { from: 'user', text: message.text, ...(names.length ? { files: names } : {}) });
    }
    const token = this.token(session, message.text);
    const held = this.hold(session);
    try {
      await waiting.resume(session, message, token);
    } catch (err) {
      await this.fail(session, err instanceof TaskError ? err : new TaskError(4001, (err as Error).message), waitPoint.nodeId);
      return true;
    } finally {
      this.ctx.tracker.release(held);
    }
    await this.ctx.active.whenSettled(session);
    return true;
  }

  private leaveWait(session: SessionRecord): void {
    session.waitingAt = undefined;
    session.state = 'running';
    session.lastActivity = Date.now();
    this.ctx.journal.changed(session);
  }

  /** Keeps received files within the inbound limits; skipped files go to the Session log. */
  async keepFiles(session: SessionRecord, files: IncomingFile[], nodeId?: string): Promise<FileList> {
    if (!files.length) return fileList([]);
    const { list, warnings } = await receiveFiles(files, this.ctx.files, session.id);
    for (const warning of warnings) {
      this.ctx.journal.addLog(session, { level: 'warn', code: warning.code, message: warning.message, nodeId });
      const said = { session: session.id, code: warning.code, message: warning.message };
      this.ctx.red.log.warn(`[channel-sessions] ${runtimeText(this.ctx.red, 'core', 'runtime.log.fileWarning', said)}`);
    }
    return list;
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

  private endAtRemovedNode(session: SessionRecord): Promise<void> {
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

  /** After the end was committed: what the Session held is freed. */
  private afterEnd(session: SessionRecord, story: SessionStory): void {
    this.ctx.ended(session, story);
    this.ctx.registry.sessionEnded(session);
    void this.ctx.files.forget(session.id).catch(() => undefined);
  }

  private createSession(
    fields: Pick<SessionRecord, 'channel' | 'environment' | 'process' | 'key' | 'isTest' | 'binding' | 'person'>,
    id = newSessionId(),
  ): SessionRecord {
    const now = Date.now();
    return { v: SESSION_FORMAT, id, ...fields, vars: {}, historyLines: 0, logLines: 0, created: now, lastActivity: now, state: 'running' };
  }

  /** The step is over (committed or to be tried again): its Session leaves memory. */
  private release(session: SessionRecord | undefined): void {
    const step = session && this.ctx.active.stepOf(session);
    if (step === undefined) return;
    this.ctx.active.deactivate(session);
    this.ctx.tracker.forget(step);
  }

  /** A token of the Session's step in progress, marked with that step (see `STEP`). */
  token(session: SessionRecord, payload?: unknown): TokenMessage {
    const token = this.ctx.journal.token(session, payload);
    const step = this.ctx.active.stepOf(session);
    if (step !== undefined) Object.assign(token.session, { [STEP]: step });
    return token;
  }

  /** The engine holds the step's token itself while a waiting node resumes; returns the step to release. */
  private hold(session: SessionRecord): number {
    const step = this.ctx.active.stepOf(session) ?? 0;
    this.ctx.tracker.hold(step);
    return step;
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

/** Why a Session ended at a node a deploy removed: the log line, the Session's log and its end reason. */
export function nodeRemoved(red: RED, sessionId: string, at: SessionRecord['waitingAt']): string {
  const type = at?.nodeType ?? runtimeText(red, 'core', 'runtime.log.aNode');
  return runtimeText(red, 'core', 'runtime.log.nodeRemoved', { session: sessionId, type, node: String(at?.nodeId) });
}

export function newSessionId(): string {
  return randomBytes(12).toString('hex');
}
