import { TEST_CHANNEL, type ChannelName } from '../model/channels';
import { ConversationWorker } from './conversation-worker';
import type { Accepted, Acceptance, Delivery, InboundReader } from './delivery';
import { TaskError, type TaskErrorInfo } from '../model/errors';
import { FileStore } from '../files/file-store';
import { forgetFilesOfGoneSessions } from '../files/gone-sessions';
import { receiveFiles, type IncomingFile } from '../files/intake';
import { fileList, type FileList } from '../files/file-values';
import { DEFAULT_IDLE_TIMEOUT } from '../model/limits';
import type { RED, RedNode } from '../model/red';
import { HISTORY_LIMIT, LOG_LIMIT, isLive, sessionRef, type HistoryEntry, type SessionLogEntry, type SessionRecord, type TokenMessage } from '../model/session';
import { StartStatus, type EnvironmentNote } from './start-status';
import type { InboundMessage, StartRegistration } from './starts';
import { StoreChooser } from '../stores/choose-store';
import { MemoryStore, type ContextLike } from '../stores/memory/memory-store';
import { StoreUnavailable, type SessionStore } from '../stores/session-store';
import { TokenTracker } from './token-tracker';
import { ActiveSessions } from './active-sessions';
import { ItemWaiters } from './item-waiters';
import { Registry, type WaitingNode } from './registry';
import { DIRECT, END, SessionSteps, TEST_START, newSessionId } from './session-steps';
import { StoreHealth } from './store-health';
import type { ChannelBehaviour } from './behaviour';
import { dropOpeningAnswer } from './opening-answer';

export type { Accepted, Acceptance, Delivery, DeliveryOutcome, InboundReader } from './delivery';
export type { EnvironmentNote } from './start-status';
export type { WaitingNode } from './registry';

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
  /** What a crash loses with this store (none for a durable one), said at every deploy. */
  warning?: string;
}

const ENDED_KEPT = 100;
const LEASE_MS = 30_000;
/** How long a step from before a modified-nodes deploy may still finish on its own. */
const DEPLOY_GRACE_MS = 5_000;
/** How long an item in a shared store waits for the instance that recorded it before another takes it. */
const ORPHAN_AFTER_MS = 3_000;
const STORE_UNAVAILABLE = 'Session store unavailable';
/** How often received files of Sessions no store knows are looked for (also at the first start). */
const GONE_FILES_EVERY_MS = 60 * 60 * 1000;

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
  private readonly registry = new Registry();
  private readonly active = new ActiveSessions();
  private readonly waiters = new ItemWaiters();
  private readonly listeners = new Set<(event: SessionEvent) => void>();
  private readonly ended: SessionRecord[] = [];
  private readonly tracker: TokenTracker;
  private readonly status: StartStatus;
  private readonly health: StoreHealth;
  private readonly steps: SessionSteps;
  private flowsRunning = false;
  private deploys = 0;
  private sweeper: NodeJS.Timeout | undefined;
  private wake: { at: number; timer: NodeJS.Timeout } | undefined;
  private countsTimer: NodeJS.Timeout | undefined;
  private goneFilesAt = 0;

  constructor(private readonly red: RED) {
    this.settings = (red.settings.channelSessions ?? {}) as EngineSettings;
    this.files = new FileStore(String(red.settings.userDir ?? process.cwd()), this.settings);
    this.chooser = new StoreChooser(red);
    this.status = new StartStatus(red);
    this.tracker = new TokenTracker((id) => this.steps.tokenStopped(id));
    this.health = new StoreHealth(red, {
      environmentsOn: (store) => [...this.environments.values()].filter((e) => e.store === store).map((e) => e.attachment.id),
      showNote: (id, unavailable) => {
        if (unavailable) this.status.note(id, { fill: 'red', text: STORE_UNAVAILABLE });
        else if (this.status.noteOf(id)?.text === STORE_UNAVAILABLE) this.status.note(id, undefined);
        this.showServing();
      },
      resumed: () => void this.sweep(),
    });
    this.steps = new SessionSteps({
      red,
      engine: this,
      registry: this.registry,
      active: this.active,
      tracker: this.tracker,
      waiters: this.waiters,
      health: this.health,
      environment: (id) => this.environments.get(id),
      orderOf: (processId) => this.status.orderOf(processId),
      idleSeconds: (channel) => this.idleSeconds(channel),
      flowsRunning: () => this.flowsRunning,
      deploys: () => this.deploys,
      emit: (event) => this.emit(event),
      ended: (session) => {
        this.ended.push(session);
        if (this.ended.length > ENDED_KEPT) this.ended.shift();
      },
      wakeAt: (due) => this.wakeAt(due),
      countsChanged: () => this.countsChanged(),
    });
    this.installHooks();
    red.events.on('flows:stopping', (event: { type?: string } | undefined) => {
      this.flowsRunning = false;
      this.deploys++;
      // A full deploy or a stop closes every node: no step in flight can finish.
      if (!event?.type || event.type === 'full') this.active.abandonOlderThan(this.deploys);
    });
    red.events.on('flows:started', () => this.afterDeploy());
    const every = Math.max(0.05, Math.min(this.settings.sweepInterval ?? 5, 5)) * 1000;
    this.sweeper = setInterval(() => void this.sweep(), every);
    this.sweeper.unref();
  }

  // ---- what modules and nodes plug in -------------------------------------------------------

  registerChannel(moduleKey: string, behaviour: ChannelBehaviour): void {
    this.registry.registerChannel(moduleKey, behaviour);
  }

  behaviourFor(channel: ChannelName): ChannelBehaviour {
    return this.registry.behaviourFor(channel);
  }

  /** A module's kind of inbound item, and how to read it back into a Delivery (after a restart too). */
  registerInbound(kind: string, reader: InboundReader): void {
    this.registry.readers.set(kind, reader);
  }

  attachEnvironment(attachment: EnvironmentAttachment): void {
    this.status.note(attachment.id, undefined);
    const existing = this.environments.get(attachment.id);
    if (existing && existing.attachment.sessionStore === attachment.sessionStore) {
      existing.attachment = attachment;
      if (existing.store instanceof MemoryStore)
        existing.store.rebind({ context: attachment.context, storeName: attachment.sessionStore ?? '', log: this.red.log });
      this.warnAtDeploy(attachment, existing.warning);
      return;
    }
    let state: EnvironmentState;
    try {
      const choice = this.chooser.choose(attachment.sessionStore || undefined, { context: attachment.context });
      state = { attachment, store: choice.store, ready: Promise.resolve(), warning: choice.warning };
      this.warnAtDeploy(attachment, choice.warning);
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

  /** The Session store an Environment uses (a module checks `shared` to keep per-call state there). */
  storeOf(environmentId: string): SessionStore | undefined {
    return this.environments.get(environmentId)?.store;
  }

  environmentName(id: string): string {
    return this.environments.get(id)?.attachment.name || id;
  }

  registerStart(registration: StartRegistration): void {
    this.registry.starts.set(registration.node.id, registration);
  }

  unregisterStart(node: RedNode): void {
    this.registry.unregisterStart(node);
  }

  startAt(nodeId: string): StartRegistration | undefined {
    return this.registry.starts.get(nodeId);
  }

  allStarts(): StartRegistration[] {
    return [...this.registry.starts.values()];
  }

  registerWaitingNode(waiting: WaitingNode): void {
    this.registry.waitingNodes.set(waiting.node.id, waiting);
    this.status.forgetShown(waiting.node.id);
    this.countsChanged();
  }

  unregisterWaitingNode(node: RedNode): void {
    this.registry.unregisterWaitingNode(node);
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
    const recorded = await this.health.guard(env.store, () => env.store.record(item));
    if (recorded === 'duplicate') return 'duplicate';
    const accepted = this.waiters.waitFor(env.store, recorded.seq, item);
    this.workerFor(env.store).kick(item);
    return accepted;
  }

  /** The conversation's live Session, if any (the one in a step, else the stored one). */
  async liveSessionFor(environment: string, key: string): Promise<SessionRecord | undefined> {
    for (const session of this.active.all()) {
      if (session.environment === environment && session.key === key && isLive(session)) return session;
    }
    const env = this.environments.get(environment);
    return env ? env.store.liveSession({ environment, conversation: key }) : undefined;
  }

  /** A test-chat Session at a chosen start, on the Chat Channel. */
  async startTest(startNodeId: string, testData?: Record<string, unknown>): Promise<SessionRecord> {
    const start = this.registry.starts.get(startNodeId);
    if (!start) throw new TaskError(3005, `There is no deployed start node ${startNodeId}`);
    const sessionId = newSessionId();
    const ref = { environment: start.environment ?? '', conversation: `test:${sessionId}` };
    const recorded = await this.testStore.record({ ...ref, kind: TEST_START, payload: { startNodeId, testData: testData ?? {}, sessionId } });
    if (recorded === 'duplicate') throw new Error('unreachable');
    const accepted = this.waiters.waitFor(this.testStore, recorded.seq);
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
    const accepted = this.waiters.waitFor(this.testStore, recorded.seq);
    this.workerFor(this.testStore).kick(ref);
    return (await accepted.settled).kind === 'continued';
  }

  // ---- Sessions -----------------------------------------------------------------------------

  /** A Session by id: in a step, stored, or recently ended. */
  async findSession(id: string): Promise<SessionRecord | undefined> {
    const active = this.active.get(id);
    if (active) return active;
    for (const store of this.allStores()) {
      const found = await store.sessionById(id).catch(() => undefined);
      if (found) return found;
    }
    return this.ended.find((s) => s.id === id);
  }

  /** Live Sessions of every store (newest activity first), at most `limit`. */
  async liveSessions(limit = 500): Promise<SessionRecord[]> {
    const byId = new Map<string, SessionRecord>();
    for (const session of this.active.all()) if (isLive(session)) byId.set(session.id, session);
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
    return this.active.live(id);
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
    dropOpeningAnswer(session);
    session.waitingAt = { nodeId: node.id, nodeType: node.type, since: Date.now(), ...(opening ? { opening } : {}) };
    session.state = 'waiting';
    this.emit({ type: 'state', session });
    this.active.settle(session);
  }

  /** EndTask: the Session is completed and its conversation released. */
  complete(session: SessionRecord, msg?: TokenMessage): Promise<void> {
    if (msg?.vars) session.vars = msg.vars;
    return this.steps.finish(session, 'completed', 'EndTask reached');
  }

  /** An error nobody handles on the error branch ends the Session; the log keeps it. */
  fail(session: SessionRecord, error: TaskError, nodeId?: string): Promise<void> {
    session.error = error.toInfo();
    this.addLog(session, { level: 'error', code: error.code, message: error.message, nodeId });
    return this.steps.finish(session, 'ended', `${error.code} ${error.codeName}: ${error.message}`);
  }

  /**
   * Ends a live Session from outside its flow (the Sessions view, a hang-up): recorded as an item
   * of its conversation, so it waits for a step in progress and survives a crash.
   */
  async end(session: SessionRecord, reason: string): Promise<void> {
    const store = session.isTest ? this.testStore : this.environments.get(session.environment)?.store;
    if (!store) return;
    const ref = { environment: session.environment, conversation: session.key };
    const recorded = await this.health.guard(store, () => store.record({ ...ref, kind: END, payload: { sessionId: session.id, reason } }));
    if (recorded === 'duplicate') return;
    const accepted = this.waiters.waitFor(store, recorded.seq, ref);
    this.workerFor(store).kick(ref);
    await accepted.settled;
  }

  /** Resolves when the Session waits or has ended. */
  whenSettled(session: SessionRecord): Promise<void> {
    return this.active.whenSettled(session);
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
        handle: (item, lease, releaseIfLast, live) =>
          this.waiters.whileHandling(store, item.seq, () => this.steps.handleItem(store, item, lease, releaseIfLast, live)),
        onError: (err, ref) => this.red.log.error(`[channel-sessions] conversation ${ref.conversation}: ${(err as Error).message}`),
      });
      this.workers.set(store, worker);
    }
    return worker;
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
    const timer = setTimeout(
      () => {
        this.wake = undefined;
        void this.sweep();
      },
      Math.max(0, due - Date.now()) + 5,
    );
    timer.unref();
    this.wake = { at: due, timer };
  }

  /** Due timers become items of their conversations; conversations with unhandled items are handled. */
  private async sweep(): Promise<void> {
    if (!this.flowsRunning) return;
    if (Date.now() - this.goneFilesAt >= GONE_FILES_EVERY_MS) void this.forgetGoneSessionFiles();
    await this.waiters.sweep(2000);
    for (const store of this.allStores()) {
      const worker = this.workerFor(store);
      try {
        if (!(await this.health.writable(store))) continue;
        for (const ref of await store.takeDueTimers(Date.now(), 500)) worker.kick(ref);
        for (const ref of await store.orphans(200, worker.owner)) {
          // A message another instance recorded a moment ago is about to be handled there (its
          // waiting route answers with the outcome); only one left alone for a while is taken over.
          if (store.shared && Date.now() - ((await store.next(ref))?.at ?? 0) < ORPHAN_AFTER_MS) continue;
          worker.kick(ref);
        }
      } catch (err) {
        this.health.failed(store, err);
      }
    }
  }

  private async forgetGoneSessionFiles(): Promise<void> {
    this.goneFilesAt = Date.now();
    // The durable default too, though no deployed Environment may use it now: its Sessions keep their files.
    const durable = this.chooser.durableStoreIfAny();
    const stores = new Set([...this.allStores(), ...this.chooser.all(), ...(durable ? [durable] : [])]);
    const known = async (id: string): Promise<boolean> => {
      if (this.active.get(id)) return true;
      for (const store of stores) {
        try {
          if (await store.sessionById(id)) return true;
        } catch {
          return true; // a store that cannot say keeps the files
        }
      }
      return false;
    };
    try {
      const removed = await forgetFilesOfGoneSessions(this.files, known);
      if (removed)
        this.red.log.info(
          `[channel-sessions] removed the received files of ${removed} Session(s) no store knows (left by steps that ran again after a crash, or by Sessions removed outside Node-RED)`,
        );
    } catch (err) {
      this.red.log.warn(`[channel-sessions] could not look for received files of ended Sessions: ${(err as Error).message}`);
    }
  }

  private async restored(env: EnvironmentState, count: number): Promise<void> {
    if (!count) return;
    this.red.log.info(
      `[channel-sessions] Environment "${env.attachment.name}": ${count} waiting Sessions restored from context store "${env.attachment.sessionStore}"`,
    );
    // A copied-back Session has no timers yet: give each its expiry (and timeout) again.
    const worker = this.workerFor(env.store);
    for (const session of await env.store.list({ environment: env.attachment.id, limit: Number.MAX_SAFE_INTEGER })) {
      const lease = await env.store.claim({ environment: session.environment, conversation: session.key }, worker.owner, LEASE_MS);
      if (!lease) continue;
      await env.store.commit({ lease, session, timers: this.steps.timersOf(session) }).catch(() => undefined);
      await env.store.release(lease);
    }
  }

  private afterDeploy(): void {
    const ids = this.status.readFlows();
    this.flowsRunning = true;
    // A modified-nodes deploy restarts some nodes only: a step still running a while later had
    // its token in one of them, and runs again from its recorded item.
    const deploys = this.deploys;
    setTimeout(() => {
      const cut = this.active.abandonOlderThan(deploys);
      if (cut) this.red.log.info(`[channel-sessions] ${cut} step(s) cut by the deploy run again from their recorded messages`);
    }, DEPLOY_GRACE_MS).unref();
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
        this.health.failed(store, err);
      }
    }
  }

  private showServing(): void {
    this.status.showServing(this.allStarts(), (id) => this.environmentName(id));
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
    this.status.showWaiting(counts, (id) => this.registry.waitingNodes.get(id)?.node);
  }

  // ---- store faults -------------------------------------------------------------------------

  private warnAtDeploy(attachment: EnvironmentAttachment, warning: string | undefined): void {
    if (warning) this.red.log.warn(`[channel-sessions] Environment "${attachment.name || attachment.id}": ${warning}`);
  }

  // ---- plumbing -----------------------------------------------------------------------------

  private allStores(): SessionStore[] {
    const stores = new Set<SessionStore>([this.testStore]);
    for (const env of this.environments.values()) stores.add(env.store);
    return [...stores];
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

let current: Engine | undefined;

/** One engine per Node-RED runtime; every node set of the package shares it. */
export function engineFor(red: RED): Engine {
  if (!current) current = new Engine(red);
  return current;
}
