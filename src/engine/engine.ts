import { randomBytes } from 'node:crypto';
import { TEST_CHANNEL, type ChannelName } from './channels';
import { ConversationWorker, type ItemResult } from './conversation-worker';
import type { Accepted, Acceptance, Delivery, DeliveryOutcome, InboundReader } from './delivery';
import { TaskError, type TaskErrorInfo } from './errors';
import { FileStore } from './files/file-store';
import { receiveFiles, type IncomingFile } from './files/intake';
import { fileList, type FileList } from './files/file-values';
import { DEFAULT_IDLE_TIMEOUT } from './limits';
import type { RED, RedNode } from './red';
import {
  HISTORY_LIMIT, LOG_LIMIT, isLive, sessionRef,
  type HistoryEntry, type SessionLogEntry, type SessionRecord, type TokenMessage,
} from './session';
import { StartStatus, type EnvironmentNote } from './start-status';
import { chooseStart, type InboundMessage, type Opening, type StartRegistration } from './starts';
import { StoreChooser } from './store/choose-store';
import { MemoryStore, type ContextLike } from './store/memory-store';
import {
  LeaseLost, StoreUnavailable,
  type ConversationRef, type InboundItem, type Lease, type SessionStore, type SessionTimer,
} from './store/session-store';
import { TokenTracker } from './token-tracker';
import type { ChannelBehaviour } from './behaviour';

export type { Accepted, Acceptance, Delivery, DeliveryOutcome, InboundReader } from './delivery';
export type { EnvironmentNote } from './start-status';

/** An Environment config node, as the engine sees it. */
export interface EnvironmentAttachment {
  id: string;
  name: string;
  /** Which module it belongs to; the shared Start names Environments by this key. */
  moduleKey: string;
  sessionStore?: string;
  maxSessions: number;
  context: ContextLike;
}

/** A node a Session can wait at: InputTask, the buttons step, the voice recording, a start asking for its opening. */
export interface WaitingNode {
  node: RedNode;
  /** Seconds before `timedOut` is called; 0 or none waits until the Session expires. */
  timeoutSeconds?: number;
  resume(session: SessionRecord, message: InboundMessage, token: TokenMessage): Promise<void>;
  timedOut?(session: SessionRecord, token: TokenMessage): Promise<void>;
}

export interface SessionEvent {
  type: 'history' | 'log' | 'state';
  session: SessionRecord;
  entry?: HistoryEntry | SessionLogEntry;
}

export interface EngineSettings {
  fileStorage?: 'workspace' | 'inline';
  workspaceQuota?: number;
  /** Seconds, by Channel. */
  idleTimeout?: Partial<Record<ChannelName, number>>;
  /** Seconds between looks for due timers and unhandled messages. */
  sweepInterval?: number;
}

interface EnvironmentState {
  attachment: EnvironmentAttachment;
  store: SessionStore;
  ready: Promise<void>;
}

/** A Session inside a step: the token's view of it, and whether a deploy cut the step. */
interface ActiveSession {
  session: SessionRecord;
  abandoned: boolean;
  settleWaiters: Array<() => void>;
}

/** A route waiting for its recorded item (voice answers, start endpoints, the test chat). */
interface ItemWaiter {
  opened(outcome: DeliveryOutcome): void;
  settled(outcome: DeliveryOutcome): void;
}

const ENDED_KEPT = 100;
const LEASE_MS = 30_000;
/** Engine item kinds; module kinds are registered with `registerInbound`. */
const TIMEOUT = 'timeout';
const EXPIRE = 'expire';
const END = 'end';
const TEST_START = 'test-start';
const DIRECT = 'direct';
const STORE_FAULT_LOG_MS = 30_000;

/**
 * The Session engine. It knows no provider: modules record inbound items for a conversation and
 * plug their behaviour for the standard Tasks in by Channel. Each conversation's items are handled
 * one at a time, and each step (one item, up to the Session's next wait or end) is committed to
 * the Environment's store in one atomic write.
 */
export class Engine {
  readonly files: FileStore;
  readonly settings: EngineSettings;
  private readonly chooser: StoreChooser;
  private readonly testStore = new MemoryStore('the test chat (memory)');
  private readonly workers = new Map<SessionStore, ConversationWorker>();
  private readonly environments = new Map<string, EnvironmentState>();
  private readonly starts = new Map<string, StartRegistration>();
  private readonly waitingNodes = new Map<string, WaitingNode>();
  private readonly behaviours = new Map<ChannelName, ChannelBehaviour>();
  private readonly moduleOfChannel = new Map<ChannelName, string>();
  private readonly readers = new Map<string, InboundReader>();
  private readonly active = new Map<string, ActiveSession>();
  private readonly itemWaiters = new Map<string, ItemWaiter>();
  private readonly listeners = new Set<(event: SessionEvent) => void>();
  private readonly ended: SessionRecord[] = [];
  private readonly tracker: TokenTracker;
  private readonly status: StartStatus;
  private readonly storeFaults = new Map<SessionStore, number>();
  private flowsRunning = false;
  private sweeper: NodeJS.Timeout | undefined;
  private wake: { at: number; timer: NodeJS.Timeout } | undefined;
  private countsTimer: NodeJS.Timeout | undefined;

  constructor(private readonly red: RED) {
    this.settings = (red.settings.channelSessions ?? {}) as EngineSettings;
    this.files = new FileStore(String(red.settings.userDir ?? process.cwd()), this.settings);
    this.chooser = new StoreChooser(red);
    this.status = new StartStatus(red);
    this.tracker = new TokenTracker((id) => this.tokenStopped(id));
    this.installHooks();
    red.events.on('flows:stopping', () => {
      this.flowsRunning = false;
    });
    red.events.on('flows:started', () => this.afterDeploy());
    const every = Math.max(0.05, Math.min(this.settings.sweepInterval ?? 5, 5)) * 1000;
    this.sweeper = setInterval(() => void this.sweep(), every);
    this.sweeper.unref();
  }

  // ---- what modules and nodes plug in -------------------------------------------------------

  registerChannel(moduleKey: string, behaviour: ChannelBehaviour): void {
    this.behaviours.set(behaviour.channel, behaviour);
    this.moduleOfChannel.set(behaviour.channel, moduleKey);
  }

  behaviourFor(channel: ChannelName): ChannelBehaviour {
    const behaviour = this.behaviours.get(channel);
    if (!behaviour) throw new TaskError(4012, `No module handles the ${channel} Channel`);
    return behaviour;
  }

  /** A module's kind of inbound item, and how to read it back into a Delivery (after a restart too). */
  registerInbound(kind: string, reader: InboundReader): void {
    this.readers.set(kind, reader);
  }

  attachEnvironment(attachment: EnvironmentAttachment): void {
    this.status.note(attachment.id, undefined);
    const existing = this.environments.get(attachment.id);
    if (existing && existing.attachment.sessionStore === attachment.sessionStore) {
      existing.attachment = attachment;
      if (existing.store instanceof MemoryStore) existing.store.rebind({ context: attachment.context, storeName: attachment.sessionStore ?? '', log: this.red.log });
      this.warnIfNotDurable(attachment, existing.store);
      return;
    }
    let state: EnvironmentState;
    try {
      const choice = this.chooser.choose(attachment.sessionStore || undefined, { context: attachment.context });
      state = { attachment, store: choice.store, ready: Promise.resolve() };
      if (choice.warning) this.red.log.warn(`[channel-sessions] Environment "${attachment.name || attachment.id}": ${choice.warning}`);
    } catch (err) {
      // The store cannot even be opened: the Environment refuses webhooks (503) instead of losing them.
      const reason = `the Session store could not be opened: ${(err as Error).message}`;
      this.red.log.error(`[channel-sessions] Environment "${attachment.name || attachment.id}": ${reason}`);
      const store = new MemoryStore('unavailable');
      state = { attachment, store, ready: Promise.reject(new StoreUnavailable(reason)) };
      state.ready.catch(() => undefined);
      this.status.note(attachment.id, { fill: 'red', text: 'Session store unavailable' });
    }
    if (state.store instanceof MemoryStore) state.ready = state.store.restored.then((n) => this.restored(state, n));
    this.environments.set(attachment.id, state);
  }

  /**
   * A deploy-time outcome of an Environment (auto-deploy set, skipped, refused). Config nodes show
   * no status in the editor, so it appears on the status of every start bound to the Environment.
   */
  noteEnvironment(id: string, note: EnvironmentNote): void {
    this.status.note(id, note);
    this.showServing();
  }

  environmentName(id: string): string {
    return this.environments.get(id)?.attachment.name || id;
  }

  registerStart(registration: StartRegistration): void {
    this.starts.set(registration.node.id, registration);
  }

  unregisterStart(node: RedNode): void {
    if (this.starts.get(node.id)?.node === node) this.starts.delete(node.id);
  }

  startAt(nodeId: string): StartRegistration | undefined {
    return this.starts.get(nodeId);
  }

  allStarts(): StartRegistration[] {
    return [...this.starts.values()];
  }

  registerWaitingNode(waiting: WaitingNode): void {
    this.waitingNodes.set(waiting.node.id, waiting);
    this.status.forgetShown(waiting.node.id);
    this.countsChanged();
  }

  unregisterWaitingNode(node: RedNode): void {
    if (this.waitingNodes.get(node.id)?.node === node) this.waitingNodes.delete(node.id);
  }

  onSessionEvent(listener: (event: SessionEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  // ---- inbound ------------------------------------------------------------------------------

  /**
   * Records an inbound item durably in its Environment's store, then has it handled. A route
   * acknowledges the provider only after this resolves; it rejects with StoreUnavailable when the
   * item could not be recorded (the route answers 503). 'duplicate': already recorded once.
   */
  async accept(item: Acceptance): Promise<Accepted | 'duplicate'> {
    const env = this.environments.get(item.environment);
    if (!env) throw new StoreUnavailable(`Environment ${item.environment} is not deployed`);
    await env.ready;
    const recorded = await this.guard(env.store, () => env.store.record(item));
    if (recorded === 'duplicate') return 'duplicate';
    const accepted = this.waitFor(env.store, recorded.seq);
    this.workerFor(env.store).kick(item);
    return accepted;
  }

  /** The conversation's live Session, if any (the one in a step, else the stored one). */
  async liveSessionFor(environment: string, key: string): Promise<SessionRecord | undefined> {
    for (const { session } of this.active.values()) {
      if (session.environment === environment && session.key === key && isLive(session)) return session;
    }
    const env = this.environments.get(environment);
    return env ? env.store.liveSession({ environment, conversation: key }) : undefined;
  }

  /** A test-chat Session at a chosen start, on the Chat Channel. */
  async startTest(startNodeId: string, testData?: Record<string, unknown>): Promise<SessionRecord> {
    const start = this.starts.get(startNodeId);
    if (!start) throw new TaskError(3005, `There is no deployed start node ${startNodeId}`);
    const sessionId = newSessionId();
    const ref = { environment: start.environment ?? '', conversation: `test:${sessionId}` };
    const recorded = await this.testStore.record({ ...ref, kind: TEST_START, payload: { startNodeId, testData: testData ?? {}, sessionId } });
    if (recorded === 'duplicate') throw new Error('unreachable');
    const accepted = this.waitFor(this.testStore, recorded.seq);
    this.workerFor(this.testStore).kick(ref);
    const outcome = await accepted.settled;
    if ('session' in outcome) return outcome.session;
    throw new TaskError(3005, outcome.kind === 'refused' ? outcome.reason : 'The test Session did not start');
  }

  /** Test chat: a message to a test Session, through its conversation. */
  async deliverToSession(sessionId: string, message: InboundMessage): Promise<boolean> {
    const session = await this.findSession(sessionId);
    if (!session?.isTest || !isLive(session)) return false;
    const ref = { environment: session.environment, conversation: session.key };
    const recorded = await this.testStore.record({ ...ref, kind: DIRECT, payload: { channel: TEST_CHANNEL, message, mayStart: false } satisfies Delivery });
    if (recorded === 'duplicate') return false;
    const accepted = this.waitFor(this.testStore, recorded.seq);
    this.workerFor(this.testStore).kick(ref);
    return (await accepted.settled).kind === 'continued';
  }

  // ---- Sessions -----------------------------------------------------------------------------

  /** A Session by id: in a step, stored, or recently ended. */
  async findSession(id: string): Promise<SessionRecord | undefined> {
    const active = this.active.get(id);
    if (active) return active.session;
    for (const store of this.allStores()) {
      const found = await store.sessionById(id).catch(() => undefined);
      if (found) return found;
    }
    return this.ended.find((s) => s.id === id);
  }

  /** Live Sessions of every store (newest activity first), at most `limit`. */
  async liveSessions(limit = 500): Promise<SessionRecord[]> {
    const byId = new Map<string, SessionRecord>();
    for (const { session } of this.active.values()) if (isLive(session)) byId.set(session.id, session);
    for (const store of this.allStores()) {
      for (const s of await store.list({ limit }).catch(() => [])) if (!byId.has(s.id)) byId.set(s.id, s);
    }
    return [...byId.values()].sort((a, b) => b.lastActivity - a.lastActivity).slice(0, limit);
  }

  async liveCount(): Promise<number> {
    let n = 0;
    for (const store of this.allStores()) n += await store.count({}).catch(() => 0);
    return n;
  }

  endedSessions(): SessionRecord[] {
    return [...this.ended];
  }

  token(session: SessionRecord, payload?: unknown): TokenMessage {
    return { _msgid: this.red.util.generateId(), session: sessionRef(session), vars: session.vars, payload };
  }

  /** The live Session a token belongs to; undefined when it is not in a step (the token is dropped). */
  sessionOf(msg: unknown): SessionRecord | undefined {
    const id = (msg as TokenMessage | undefined)?.session?.id;
    if (typeof id !== 'string') return undefined;
    const session = this.active.get(id)?.session;
    return session && isLive(session) ? session : undefined;
  }

  addHistory(session: SessionRecord, entry: Omit<HistoryEntry, 'at'>): void {
    const full = { at: Date.now(), ...entry };
    session.history.push(full);
    if (session.history.length > HISTORY_LIMIT) session.history.splice(0, session.history.length - HISTORY_LIMIT);
    this.emit({ type: 'history', session, entry: full });
  }

  addLog(session: SessionRecord, entry: Omit<SessionLogEntry, 'at'>): void {
    const full = { at: Date.now(), ...entry };
    session.log.push(full);
    if (session.log.length > LOG_LIMIT) session.log.splice(0, session.log.length - LOG_LIMIT);
    this.emit({ type: 'log', session, entry: full });
  }

  /** Keeps received files within the inbound limits; skipped files go to the Session log. */
  async keepFiles(session: SessionRecord, files: IncomingFile[], nodeId?: string): Promise<FileList> {
    if (!files.length) return fileList([]);
    const { list, warnings } = await receiveFiles(files, this.files, session.id);
    for (const warning of warnings) {
      this.addLog(session, { level: 'warn', code: warning.code, message: warning.message, nodeId });
      this.red.log.warn(`[channel-sessions] Session ${session.id}: ${warning.code} ${warning.message}`);
    }
    return list;
  }

  /** The token reached a node that waits: the step ends here and is committed with the variables. */
  async wait(session: SessionRecord, msg: TokenMessage, node: RedNode, opening = false): Promise<void> {
    if (!isLive(session)) return;
    session.vars = msg.vars ?? session.vars;
    session.waitingAt = { nodeId: node.id, nodeType: node.type, since: Date.now(), ...(opening ? { opening } : {}) };
    session.state = 'waiting';
    this.emit({ type: 'state', session });
    this.settle(session);
  }

  /** EndTask: the Session is completed and its conversation released. */
  complete(session: SessionRecord, msg?: TokenMessage): Promise<void> {
    if (msg?.vars) session.vars = msg.vars;
    return this.finish(session, 'completed', 'EndTask reached');
  }

  /** An error nobody handles on the error branch ends the Session; the log keeps it. */
  fail(session: SessionRecord, error: TaskError, nodeId?: string): Promise<void> {
    session.error = error.toInfo();
    this.addLog(session, { level: 'error', code: error.code, message: error.message, nodeId });
    return this.finish(session, 'ended', `${error.code} ${error.codeName}: ${error.message}`);
  }

  /**
   * Ends a live Session from outside its flow (the Sessions view, a hang-up): recorded as an item
   * of its conversation, so it waits for a step in progress and survives a crash.
   */
  async end(session: SessionRecord, reason: string): Promise<void> {
    const store = session.isTest ? this.testStore : this.environments.get(session.environment)?.store;
    if (!store) return;
    const ref = { environment: session.environment, conversation: session.key };
    const recorded = await this.guard(store, () => store.record({ ...ref, kind: END, payload: { sessionId: session.id, reason } }));
    if (recorded === 'duplicate') return;
    const accepted = this.waitFor(store, recorded.seq);
    this.workerFor(store).kick(ref);
    await accepted.settled;
  }

  /** Resolves when the Session waits or has ended. */
  whenSettled(session: SessionRecord): Promise<void> {
    const active = this.active.get(session.id);
    if (session.state !== 'running' || !active || active.abandoned) return Promise.resolve();
    return new Promise((resolve) => active.settleWaiters.push(resolve));
  }

  /** Our own nodes call this after sending, so a token sent to no wire still ends the Session. */
  tokenMoved(session: SessionRecord): void {
    this.tracker.check(session.id);
  }

  recordError(session: SessionRecord, error: TaskErrorInfo, nodeId: string): void {
    this.addLog(session, { level: 'error', code: error.code, message: error.message, nodeId });
  }

  // ---- steps --------------------------------------------------------------------------------

  private workerFor(store: SessionStore): ConversationWorker {
    let worker = this.workers.get(store);
    if (!worker) {
      worker = new ConversationWorker({
        store,
        leaseMs: LEASE_MS,
        mayRun: () => this.flowsRunning || store === this.testStore,
        handle: (item, lease) => this.handleItem(store, item, lease),
        onError: (err, ref) => this.red.log.error(`[channel-sessions] conversation ${ref.conversation}: ${(err as Error).message}`),
      });
      this.workers.set(store, worker);
    }
    return worker;
  }

  /** One step: the item is handled up to the Session's next wait or end, then committed at once. */
  private async handleItem(store: SessionStore, item: InboundItem, lease: Lease): Promise<ItemResult> {
    const waiter = this.itemWaiters.get(waiterKey(store, item.seq));
    let live: SessionRecord | undefined;
    try {
      live = await store.liveSession(item);
    } catch (err) {
      this.storeFailed(store, err);
      return 'retry';
    }
    const step: { session?: SessionRecord; marks: Array<{ key: string; ttlMs: number }> } = { session: live, marks: [] };
    if (live) this.activate(live);
    let outcome: DeliveryOutcome;
    try {
      outcome = await this.runItem(store, item, live, step, waiter);
    } catch (err) {
      if (err instanceof StoreUnavailable) {
        this.storeFailed(store, err);
        this.deactivate(step.session);
        return 'retry';
      }
      this.red.log.error(`[channel-sessions] message ${item.seq} of conversation ${item.conversation} failed: ${(err as Error).message}`);
      outcome = { kind: 'ignored' };
    }
    const session = step.session;
    if (session && this.active.get(session.id)?.abandoned) {
      // A deploy or stop cut the flow: the item stays recorded and its step runs again afterwards.
      this.deactivate(session);
      return 'retry';
    }
    if (session?.state === 'running') {
      // The step handed the token on without settling (should not happen): keep it running, as before.
      this.red.log.warn(`[channel-sessions] Session ${session.id}: the step left the Session running; saved as it is`);
    }
    try {
      await store.commit({
        lease, consumed: item.seq, session,
        timers: session && session.state === 'waiting' ? this.timersOf(session) : undefined,
        marks: step.marks,
      });
    } catch (err) {
      this.deactivate(session);
      if (err instanceof LeaseLost) {
        this.red.log.warn(`[channel-sessions] conversation ${item.conversation}: ${err.message}; its step is handled again there`);
        return 'retry';
      }
      this.storeFailed(store, err);
      return 'retry';
    }
    this.storeRecovered(store);
    this.deactivate(session);
    if (session && !isLive(session)) this.afterEnd(session);
    if (session?.state === 'waiting') this.wakeAt(Math.min(...this.timersOf(session).map((t) => t.due)));
    this.countsChanged();
    this.itemWaiters.delete(waiterKey(store, item.seq));
    waiter?.opened(outcome);
    waiter?.settled(outcome);
    return 'committed';
  }

  private async runItem(
    store: SessionStore, item: InboundItem, live: SessionRecord | undefined,
    step: { session?: SessionRecord; marks: Array<{ key: string; ttlMs: number }> }, waiter: ItemWaiter | undefined,
  ): Promise<DeliveryOutcome> {
    const payload = (item.payload ?? {}) as Record<string, any>;
    const ours = (s: SessionRecord | undefined): s is SessionRecord => s !== undefined && s.id === payload.sessionId && isLive(s);
    switch (item.kind) {
      case TIMEOUT: {
        if (!ours(live) || live.state !== 'waiting' || live.waitingAt?.since !== payload.wait?.since) return { kind: 'ignored' };
        const waiting = this.waitingNodes.get(live.waitingAt?.nodeId ?? '');
        if (!waiting?.timedOut) return { kind: 'ignored' };
        this.leaveWait(live);
        this.tracker.hold(live.id);
        try {
          await waiting.timedOut(live, this.token(live));
        } finally {
          this.tracker.release(live.id);
        }
        await this.whenSettled(live);
        return { kind: 'continued', session: live };
      }
      case EXPIRE: {
        if (!ours(live) || live.state !== 'waiting' || live.lastActivity !== payload.wait?.lastActivity) return { kind: 'ignored' };
        const seconds = this.idleSeconds(live.channel);
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
      default: {
        const reader = item.kind === DIRECT ? directReader : this.readers.get(item.kind);
        if (!reader) {
          this.red.log.warn(`[channel-sessions] a recorded message of kind "${item.kind}" has no module to read it (is the module loaded?); dropped`);
          return { kind: 'ignored' };
        }
        const delivery = await reader(item, live);
        if (!delivery) return { kind: 'ignored' };
        const outcome = await this.deliverStep(store, item, delivery, live, step, waiter);
        if (outcome.kind === 'started' || outcome.kind === 'continued') step.marks.push(...(delivery.marksWhenHandled ?? []));
        return outcome;
      }
    }
  }

  private async deliverStep(
    store: SessionStore, item: InboundItem, delivery: Delivery, live: SessionRecord | undefined,
    step: { session?: SessionRecord }, waiter: ItemWaiter | undefined,
  ): Promise<DeliveryOutcome> {
    if (live && delivery.startOnly) {
      waiter?.opened({ kind: 'existing', session: live });
      return { kind: 'existing', session: live };
    }
    if (live) {
      live.lastActivity = Date.now();
      waiter?.opened({ kind: 'continued', session: live });
      if (await this.continueSession(live, delivery.message)) return { kind: 'continued', session: live };
    }
    if (!delivery.mayStart) return { kind: 'ignored' };
    const env = this.environments.get(item.environment);
    if (!env) return { kind: 'refused', reason: `Environment ${item.environment} is not deployed` };
    return this.open(store, env, item, delivery, step, waiter);
  }

  private async open(
    store: SessionStore, env: EnvironmentState, item: InboundItem, delivery: Delivery,
    step: { session?: SessionRecord }, waiter: ItemWaiter | undefined,
  ): Promise<DeliveryOutcome> {
    const moduleKey = this.moduleOfChannel.get(delivery.channel) ?? '';
    const start = chooseStart([...this.starts.values()], item.environment, delivery.channel, moduleKey, (p) => this.status.orderOf(p));
    const name = env.attachment.name || env.attachment.id;
    if (!start) {
      const reason = `No Process has a start for Environment "${name}" (${delivery.channel}); the message starts nothing`;
      this.red.log.warn(`[channel-sessions] ${reason}`);
      return { kind: 'refused', reason };
    }
    const limit = env.attachment.maxSessions;
    if (limit > 0 && (await store.count({ environment: item.environment })) >= limit) {
      const reason = `Environment "${name}" has reached its limit of ${limit} live Sessions (maxSessions); the Session did not start`;
      this.red.log.warn(`[channel-sessions] ${reason}`);
      start.node.status({ fill: 'red', shape: 'ring', text: `limit of ${limit} Sessions reached` });
      return { kind: 'refused', reason };
    }
    const session = this.createSession({
      channel: delivery.channel, environment: item.environment, process: start.node.z ?? '',
      key: item.conversation, isTest: false, binding: delivery.binding ?? {},
    });
    step.session = session;
    this.activate(session);
    waiter?.opened({ kind: 'started', session });
    const files = delivery.keepOpeningFiles === false
      ? fileList([])
      : await this.keepFiles(session, delivery.message.files, start.node.id);
    const opening = delivery.opening
      ? delivery.opening(session, files)
      : { text: delivery.message.text, files: files.count ? files.names.split(', ') : undefined };
    this.begin(start, session, opening);
    await this.whenSettled(session);
    return { kind: 'started', session };
  }

  private async testStartStep(item: InboundItem, step: { session?: SessionRecord }, waiter: ItemWaiter | undefined): Promise<DeliveryOutcome> {
    const { startNodeId, testData, sessionId } = item.payload as { startNodeId: string; testData: Record<string, unknown>; sessionId: string };
    const start = this.starts.get(startNodeId);
    if (!start) return { kind: 'refused', reason: `There is no deployed start node ${startNodeId}` };
    const data = { ...start.testData, ...(testData ?? {}) };
    const session = this.createSession({
      channel: TEST_CHANNEL, environment: item.environment, process: start.node.z ?? '', key: item.conversation, isTest: true, binding: { testData: data },
    }, sessionId);
    step.session = session;
    this.activate(session);
    waiter?.opened({ kind: 'started', session });
    const opening = start.kind.testOpening ? start.kind.testOpening(data) : { text: '' };
    if (opening) this.begin(start, session, opening);
    else this.waitForOpening(start, session);
    await this.whenSettled(session);
    return { kind: 'started', session };
  }

  private begin(start: StartRegistration, session: SessionRecord, opening: Opening): void {
    session.vars.execution = {
      channel: session.channel,
      channelSender: opening.sender ?? '',
      channelRecipient: opening.recipient ?? '',
      sessionId: session.id,
    };
    if (opening.text || opening.files?.length) {
      this.addHistory(session, { from: 'user', text: opening.text, ...(opening.files?.length ? { files: opening.files } : {}) });
    }
    const token = this.token(session, opening.text);
    const wrongChannel = start.kind.channel !== null && !session.isTest && start.kind.channel !== session.channel;
    if (wrongChannel) {
      const error = new TaskError(8025, `This start serves ${start.kind.channel}; the Session came on ${session.channel} and ends`);
      start.node.error(error, { ...token, error: error.toInfo() });
      void this.fail(session, error, start.node.id);
      return;
    }
    if (start.kind.channel !== null && opening.value) session.vars[start.variable || 'variable'] = opening.value;
    start.node.status({ fill: 'green', shape: 'dot', text: `started ${new Date().toLocaleTimeString()}` });
    start.node.send(token);
    this.tracker.check(session.id);
  }

  private waitForOpening(start: StartRegistration, session: SessionRecord): void {
    this.addHistory(session, { from: 'bot', kind: 'prompt', text: 'Type the message that starts the Session.' });
    this.registerWaitingNode({
      node: start.node,
      resume: async (s, message) => {
        const files = await this.keepFiles(s, message.files, start.node.id);
        const testData = (s.binding.testData ?? {}) as Record<string, unknown>;
        const opening = start.kind.testOpeningFromMessage
          ? start.kind.testOpeningFromMessage(testData, message.text, files)
          : { text: message.text };
        this.begin(start, s, opening);
      },
    });
    void this.wait(session, this.token(session), start.node, true);
  }

  private async continueSession(session: SessionRecord, message: InboundMessage): Promise<boolean> {
    const waitPoint = session.waitingAt;
    if (!waitPoint || session.state !== 'waiting') return false;
    const waiting = this.waitingNodes.get(waitPoint.nodeId);
    if (!waiting) {
      await this.endAtRemovedNode(session);
      return false;
    }
    this.leaveWait(session);
    if (!waitPoint.opening) {
      const names = message.files.map((f) => f.name);
      this.addHistory(session, { from: 'user', text: message.text, ...(names.length ? { files: names } : {}) });
    }
    const token = this.token(session, message.text);
    this.tracker.hold(session.id);
    try {
      await waiting.resume(session, message, token);
    } catch (err) {
      await this.fail(session, err instanceof TaskError ? err : new TaskError(4001, (err as Error).message), waitPoint.nodeId);
      return true;
    } finally {
      this.tracker.release(session.id);
    }
    await this.whenSettled(session);
    return true;
  }

  private leaveWait(session: SessionRecord): void {
    session.waitingAt = undefined;
    session.state = 'running';
    session.lastActivity = Date.now();
    this.emit({ type: 'state', session });
  }

  private endAtRemovedNode(session: SessionRecord): Promise<void> {
    const at = session.waitingAt;
    const reason = `Session ${session.id} ended: the ${at?.nodeType ?? 'node'} it was waiting at (${at?.nodeId}) was removed from the flows`;
    this.red.log.warn(`[channel-sessions] ${reason}`);
    return this.endNow(session, reason);
  }

  /** Ends a Session inside its step. */
  private endNow(session: SessionRecord, reason: string): Promise<void> {
    this.addLog(session, { level: 'info', message: reason });
    return this.finish(session, 'ended', reason);
  }

  private async finish(session: SessionRecord, state: 'completed' | 'ended', reason: string): Promise<void> {
    if (!isLive(session)) return;
    session.state = state;
    session.endReason = reason;
    session.waitingAt = undefined;
    session.lastActivity = Date.now();
    this.tracker.forget(session.id);
    this.emit({ type: 'state', session });
    this.settle(session);
  }

  /** After the end was committed: what the Session held is freed. */
  private afterEnd(session: SessionRecord): void {
    this.ended.push(session);
    if (this.ended.length > ENDED_KEPT) this.ended.shift();
    this.behaviours.get(session.channel)?.sessionEnded?.(session);
    void this.files.forget(session.id).catch(() => undefined);
  }

  private createSession(
    fields: Pick<SessionRecord, 'channel' | 'environment' | 'process' | 'key' | 'isTest' | 'binding'>, id = newSessionId(),
  ): SessionRecord {
    const now = Date.now();
    return { id, ...fields, vars: {}, history: [], log: [], created: now, lastActivity: now, state: 'running' };
  }

  private activate(session: SessionRecord): void {
    this.active.set(session.id, { session, abandoned: false, settleWaiters: [] });
  }

  private deactivate(session: SessionRecord | undefined): void {
    if (!session) return;
    this.active.delete(session.id);
    this.tracker.forget(session.id);
  }

  private settle(session: SessionRecord): void {
    const active = this.active.get(session.id);
    if (!active) return;
    const waiters = active.settleWaiters.splice(0);
    for (const resolve of waiters) resolve();
  }

  private tokenStopped(sessionId: string): void {
    const active = this.active.get(sessionId);
    if (!active || active.session.state !== 'running') return;
    if (!this.flowsRunning) {
      // The flows are restarting: the step is not lost but replayed from its recorded message.
      active.abandoned = true;
      this.settle(active.session);
      return;
    }
    const reason = 'The flow stopped without reaching an EndTask or a wait; the Session ended';
    this.addLog(active.session, { level: 'info', message: reason });
    void this.finish(active.session, 'ended', reason);
  }

  /** The InputTask timeout of the wait, and the idle expiry. */
  private timersOf(session: SessionRecord): SessionTimer[] {
    const timers: SessionTimer[] = [];
    const at = session.waitingAt;
    const waiting = at ? this.waitingNodes.get(at.nodeId) : undefined;
    const seconds = waiting?.timeoutSeconds ?? 0;
    if (at && seconds > 0 && waiting?.timedOut) timers.push({ kind: 'timeout', due: at.since + seconds * 1000, payload: { since: at.since } });
    timers.push({ kind: 'expire', due: session.lastActivity + this.idleSeconds(session.channel) * 1000, payload: { lastActivity: session.lastActivity } });
    return timers;
  }

  private idleSeconds(channel: ChannelName): number {
    const timeouts = { ...DEFAULT_IDLE_TIMEOUT, ...(this.settings.idleTimeout ?? {}) };
    return timeouts[channel] ?? 24 * 3600;
  }

  // ---- timers, recovery, deploys ------------------------------------------------------------

  /** One wake-up for the earliest timer this process armed; the sweep catches the rest. */
  private wakeAt(due: number): void {
    if (!Number.isFinite(due)) return;
    if (this.wake && this.wake.at <= due) return;
    if (this.wake) clearTimeout(this.wake.timer);
    const timer = setTimeout(() => {
      this.wake = undefined;
      void this.sweep();
    }, Math.max(0, due - Date.now()) + 5);
    timer.unref();
    this.wake = { at: due, timer };
  }

  /** Due timers become items of their conversations; conversations with unhandled items are handled. */
  private async sweep(): Promise<void> {
    if (!this.flowsRunning) return;
    for (const store of this.allStores()) {
      const worker = this.workerFor(store);
      try {
        for (const ref of await store.takeDueTimers(Date.now(), 500)) worker.kick(ref);
        for (const ref of await store.orphans(200)) worker.kick(ref);
      } catch (err) {
        this.storeFailed(store, err);
      }
    }
  }

  private async restored(env: EnvironmentState, count: number): Promise<void> {
    if (!count) return;
    this.red.log.info(`[channel-sessions] Environment "${env.attachment.name}": ${count} waiting Sessions restored from context store "${env.attachment.sessionStore}"`);
    // A copied-back Session has no timers yet: give each its expiry (and timeout) again.
    const worker = this.workerFor(env.store);
    for (const session of await env.store.list({ environment: env.attachment.id, limit: Number.MAX_SAFE_INTEGER })) {
      const lease = await env.store.claim({ environment: session.environment, conversation: session.key }, worker.owner, LEASE_MS);
      if (!lease) continue;
      await env.store.commit({ lease, session, timers: this.timersOf(session) }).catch(() => undefined);
      await env.store.release(lease);
    }
  }

  private afterDeploy(): void {
    const ids = this.status.readFlows();
    this.flowsRunning = true;
    this.showServing();
    this.countsChanged();
    void this.endSessionsAtRemovedNodes(ids);
    void this.sweep();
  }

  /** Sessions waiting at a node the deploy removed end now, each as a step of its conversation. */
  private async endSessionsAtRemovedNodes(ids: Set<string>): Promise<void> {
    for (const store of this.allStores()) {
      try {
        const gone = [...(await store.waitingByNode()).keys()].filter((id) => !ids.has(id));
        if (!gone.length) continue;
        for (const session of await store.list({ waitingAt: gone, limit: 1000 })) {
          const at = session.waitingAt;
          const reason = `Session ${session.id} ended: the ${at?.nodeType ?? 'node'} it was waiting at (${at?.nodeId}) was removed from the flows`;
          this.red.log.warn(`[channel-sessions] ${reason}`);
          const ref = { environment: session.environment, conversation: session.key };
          await store.record({ ...ref, kind: END, payload: { sessionId: session.id, reason } });
          this.workerFor(store).kick(ref);
        }
      } catch (err) {
        this.storeFailed(store, err);
      }
    }
  }

  private showServing(): void {
    this.status.showServing([...this.starts.values()], (id) => this.environmentName(id));
  }

  /** "N waiting" on the nodes, counted by the stores, at most once a second however busy. */
  private countsChanged(): void {
    if (this.countsTimer) return;
    this.countsTimer = setTimeout(() => {
      this.countsTimer = undefined;
      void this.showCounts();
    }, 500);
    this.countsTimer.unref();
  }

  private async showCounts(): Promise<void> {
    const counts = new Map<string, number>();
    for (const store of this.allStores()) {
      for (const [node, n] of await store.waitingByNode().catch(() => new Map<string, number>())) counts.set(node, (counts.get(node) ?? 0) + n);
    }
    this.status.showWaiting(counts, (id) => this.waitingNodes.get(id)?.node);
  }

  // ---- store faults -------------------------------------------------------------------------

  private async guard<T>(store: SessionStore, work: () => Promise<T>): Promise<T> {
    try {
      const result = await work();
      this.storeRecovered(store);
      return result;
    } catch (err) {
      this.storeFailed(store, err);
      throw err instanceof StoreUnavailable ? err : new StoreUnavailable((err as Error).message, err);
    }
  }

  /** Logged (once in a while), and shown on the starts of every Environment on that store. */
  private storeFailed(store: SessionStore, err: unknown): void {
    const last = this.storeFaults.get(store);
    const now = Date.now();
    if (last === undefined || now - last > STORE_FAULT_LOG_MS) {
      this.red.log.error(`[channel-sessions] ${(err as Error).message}. Webhooks are refused with 503 until it can be written again; nothing unrecorded is acknowledged.`);
      this.storeFaults.set(store, now);
      for (const env of this.environments.values()) {
        if (env.store === store) this.status.note(env.attachment.id, { fill: 'red', text: 'Session store unavailable' });
      }
      this.showServing();
    }
  }

  private storeRecovered(store: SessionStore): void {
    if (!this.storeFaults.has(store)) return;
    this.storeFaults.delete(store);
    this.red.log.info(`[channel-sessions] The Session store (${store.description}) can be written again; service resumes`);
    for (const env of this.environments.values()) {
      if (env.store === store && this.status.noteOf(env.attachment.id)?.text === 'Session store unavailable') this.status.note(env.attachment.id, undefined);
    }
    this.showServing();
    void this.sweep();
  }

  private warnIfNotDurable(attachment: EnvironmentAttachment, store: SessionStore): void {
    if (store.durable) return;
    this.red.log.warn(`[channel-sessions] Environment "${attachment.name || attachment.id}": Session store ${store.description} is not durable: a crash loses conversations in progress and messages not yet handled`);
  }

  // ---- plumbing -----------------------------------------------------------------------------

  private allStores(): SessionStore[] {
    const stores = new Set<SessionStore>([this.testStore]);
    for (const env of this.environments.values()) stores.add(env.store);
    return [...stores];
  }

  private waitFor(store: SessionStore, seq: number): Accepted {
    let opened!: (o: DeliveryOutcome) => void;
    let settled!: (o: DeliveryOutcome) => void;
    const openedP = new Promise<DeliveryOutcome>((resolve) => (opened = resolve));
    const settledP = new Promise<DeliveryOutcome>((resolve) => (settled = resolve));
    let wasOpened = false;
    this.itemWaiters.set(waiterKey(store, seq), {
      opened: (o) => {
        if (!wasOpened) opened(o);
        wasOpened = true;
      },
      settled,
    });
    return { seq, opened: openedP, settled: settledP };
  }

  private emit(event: SessionEvent): void {
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch {
        // a listener (the editor feed) must never break a Session
      }
    }
  }

  private installHooks(): void {
    const idOf = (msg: any): string | undefined => {
      const id = msg?.session?.id;
      return typeof id === 'string' && this.active.has(id) ? id : undefined;
    };
    const hooks = this.red.hooks;
    for (const name of ['preDeliver', 'onReceive', 'onComplete']) {
      try {
        hooks.remove(`${name}.channelSessions`);
      } catch {
        // not there yet
      }
    }
    hooks.add('preDeliver.channelSessions', (event) => {
      const id = idOf(event.msg);
      if (id) this.tracker.delivered(id, event.msg);
    });
    hooks.add('onReceive.channelSessions', (event) => {
      const id = idOf(event.msg);
      if (id) this.tracker.received(id, event.msg);
    });
    hooks.add('onComplete.channelSessions', (event) => {
      const id = idOf(event.msg);
      if (id) this.tracker.completed(id);
    });
  }
}

/** The test chat's own messages carry their Delivery as it is (they never leave this process). */
const directReader: InboundReader = async (item) => item.payload as Delivery;

const storeIds = new WeakMap<SessionStore, number>();

function waiterKey(store: SessionStore, seq: number): string {
  let id = storeIds.get(store);
  if (id === undefined) storeIds.set(store, (id = storeIds_next++));
  return `${id}:${seq}`;
}

let storeIds_next = 1;

function newSessionId(): string {
  return randomBytes(12).toString('hex');
}

let current: Engine | undefined;

/** One engine per Node-RED runtime; every node set of the package shares it. */
export function engineFor(red: RED): Engine {
  if (!current) current = new Engine(red);
  return current;
}

export type { ConversationRef };
