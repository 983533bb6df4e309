import { TEST_CHANNEL, type ChannelName } from '../model/channels';
import type { Accepted, Acceptance, Delivery, InboundReader } from './delivery';
import { TaskError, type TaskErrorInfo } from '../model/errors';
import { FileStore } from '../files/file-store';
import type { IncomingFile } from '../files/intake';
import type { FileList } from '../files/file-values';
import { DEFAULT_IDLE_TIMEOUT } from '../model/limits';
import { runtimeKey, type RED, type RedNode } from '../model/red';
import { isLive, type HistoryEntry, type SessionLogEntry, type SessionRecord, type TokenMessage } from '../model/session';
import { StartStatus, type EnvironmentNote } from './start-status';
import type { InboundMessage, StartRegistration } from './starts';
import { StoreUnavailable, type SessionStore } from '../stores/session-store';
import { TokenTracker } from './token-tracker';
import { ActiveSessions } from './active-sessions';
import { ItemWaiters } from './item-waiters';
import { Registry, type WaitingNode } from './registry';
import { SessionSteps, newSessionId } from './session-steps';
import { StoreHealth } from './store-health';
import type { ChannelBehaviour, TaskContext } from './behaviour';
import { Journal, type SessionEvent } from './journal';
import { Environments, type EnvironmentAttachment } from './environments';
import { Workers } from './workers';
import { Recovery } from './recovery';
import { WaitingCounts } from './waiting-counts';
import { installTokenHooks } from './token-hooks';
import { DIRECT, END, TEST_START } from './item-kinds';

export type { Accepted, Acceptance, Delivery, DeliveryOutcome, InboundReader } from './delivery';
export type { EnvironmentNote } from './start-status';
export type { WaitingNode } from './registry';
export type { SessionEvent } from './journal';
export type { EnvironmentAttachment } from './environments';

export interface EngineSettings {
  fileStorage?: 'workspace' | 'inline';
  workspaceQuota?: number;
  /** Seconds, by Channel. */
  idleTimeout?: Partial<Record<ChannelName, number>>;
  /** Seconds between looks for due timers and unhandled messages. */
  sweepInterval?: number;
}

/** How many ended Sessions the Sessions view can still show. */
const ENDED_KEPT = 100;
const STORE_UNAVAILABLE = 'Session store unavailable';

/**
 * The Session engine. It knows no provider: modules record inbound items for a conversation and
 * plug their behaviour for the standard Tasks in by Channel. Each conversation's items are handled
 * one at a time, and each step (one item, up to the Session's next wait or end) is committed to
 * the Environment's store in one atomic write.
 *
 * This class is the facade modules and nodes use; the work is done by its parts:
 * - `Registry`: what modules and deployed nodes plug in (behaviours, inbound kinds, starts, waiting nodes);
 * - `Environments`: the deployed Environments and their Session stores;
 * - `Workers` and `SessionSteps`: each conversation's items, one step at a time;
 * - `Journal`: a Session's history, log and the events the editor follows;
 * - `Recovery`: timers, the sweep, deploys and restarts;
 * - `StartStatus`, `WaitingCounts`, `StoreHealth`: what the canvas shows.
 */
export class Engine {
  readonly files: FileStore;
  readonly settings: EngineSettings;
  private readonly journal: Journal;
  private readonly registry = new Registry();
  private readonly environments: Environments;
  private readonly active = new ActiveSessions();
  private readonly waiters = new ItemWaiters();
  private readonly tracker: TokenTracker;
  private readonly status: StartStatus;
  private readonly counts: WaitingCounts;
  private readonly health: StoreHealth;
  private readonly workers: Workers;
  private readonly steps: SessionSteps;
  private readonly recovery: Recovery;
  private readonly ended: SessionRecord[] = [];

  constructor(red: RED) {
    this.settings = (red.settings.channelSessions ?? {}) as EngineSettings;
    this.files = new FileStore(String(red.settings.userDir ?? process.cwd()), this.settings);
    this.journal = new Journal(red);
    this.status = new StartStatus(red);
    this.environments = new Environments(red, {
      note: (id, note) => this.status.note(id, note),
      restored: (state, count) => this.recovery.restored(state, count),
    });
    this.counts = new WaitingCounts(
      this.status,
      () => this.environments.stores(),
      (id) => this.registry.waitingNodes.get(id)?.node,
    );
    this.tracker = new TokenTracker((id) => this.steps.tokenStopped(id));
    this.health = new StoreHealth(red, {
      environmentsOn: (store) =>
        this.environments
          .all()
          .filter((e) => e.store === store)
          .map((e) => e.attachment.id),
      showNote: (id, unavailable) => {
        if (unavailable) this.status.note(id, { fill: 'red', text: STORE_UNAVAILABLE });
        else if (this.status.noteOf(id)?.text === STORE_UNAVAILABLE) this.status.note(id, undefined);
        this.showServing();
      },
      resumed: () => void this.recovery.sweep(),
    });
    this.steps = new SessionSteps({
      red,
      files: this.files,
      journal: this.journal,
      registry: this.registry,
      active: this.active,
      tracker: this.tracker,
      waiters: this.waiters,
      health: this.health,
      environment: (id) => this.environments.get(id),
      orderOf: (processId) => this.status.orderOf(processId),
      idleSeconds: (channel) => this.idleSeconds(channel),
      flowsRunning: () => this.recovery.flowsRunning,
      deploys: () => this.recovery.deploys,
      registerWaitingNode: (waiting) => this.registerWaitingNode(waiting),
      ended: (session) => {
        this.ended.push(session);
        if (this.ended.length > ENDED_KEPT) this.ended.shift();
      },
      wakeAt: (due) => this.recovery.wakeAt(due),
      countsChanged: () => this.counts.changed(),
    });
    this.workers = new Workers(red, {
      mayRun: (store) => this.recovery.flowsRunning || store === this.environments.testStore,
      handle: (store, item, lease, releaseIfLast, live) =>
        this.waiters.whileHandling(store, item.seq, () => this.steps.handleItem(store, item, lease, releaseIfLast, live)),
    });
    installTokenHooks(red, this.active, this.tracker);
    this.recovery = new Recovery({
      red,
      sweepInterval: this.settings.sweepInterval,
      files: this.files,
      environments: this.environments,
      workers: this.workers,
      waiters: this.waiters,
      health: this.health,
      active: this.active,
      status: this.status,
      timersOf: (session) => this.steps.timersOf(session),
      deployed: () => {
        this.showServing();
        this.counts.changed();
      },
    });
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
    this.environments.attach(attachment);
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
    return this.environments.name(id);
  }

  registerStart(registration: StartRegistration): void {
    this.registry.starts.set(registration.node.id, registration);
  }

  unregisterStart(node: RedNode): void {
    this.registry.unregisterStart(node);
  }

  allStarts(): StartRegistration[] {
    return [...this.registry.starts.values()];
  }

  registerWaitingNode(waiting: WaitingNode): void {
    this.registry.waitingNodes.set(waiting.node.id, waiting);
    this.status.forgetShown(waiting.node.id);
    this.counts.changed();
  }

  unregisterWaitingNode(node: RedNode): void {
    this.registry.unregisterWaitingNode(node);
  }

  onSessionEvent(listener: (event: SessionEvent) => void): () => void {
    return this.journal.onSessionEvent(listener);
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
    this.workers.of(env.store).kick(item);
    return accepted;
  }

  /**
   * Records an item and has it handled, with nobody waiting for its outcome (an out node's queued
   * request, handled in its turn, maybe after a restart or on another instance).
   */
  async enqueue(item: Acceptance): Promise<{ seq: number } | 'duplicate'> {
    const env = this.environments.get(item.environment);
    if (!env) throw new StoreUnavailable(`Environment ${item.environment} is not deployed`);
    await env.ready;
    const recorded = await this.health.guard(env.store, () => env.store.record(item));
    if (recorded !== 'duplicate') this.workers.of(env.store).kick(item);
    return recorded;
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
    const testStore = this.environments.testStore;
    const sessionId = newSessionId();
    const ref = { environment: start.environment ?? '', conversation: `test:${sessionId}` };
    const recorded = await testStore.record({ ...ref, kind: TEST_START, payload: { startNodeId, testData: testData ?? {}, sessionId } });
    if (recorded === 'duplicate') throw new Error('unreachable');
    const accepted = this.waiters.waitFor(testStore, recorded.seq);
    this.workers.of(testStore).kick(ref);
    const outcome = await accepted.settled;
    if ('session' in outcome) return outcome.session;
    throw new TaskError(3005, outcome.kind === 'refused' ? outcome.reason : 'The test Session did not start');
  }

  /** Test chat: a message to a test Session, through its conversation. */
  async deliverToSession(sessionId: string, message: InboundMessage): Promise<boolean> {
    const session = await this.findSession(sessionId);
    if (!session?.isTest || !isLive(session)) return false;
    const testStore = this.environments.testStore;
    const ref = { environment: session.environment, conversation: session.key };
    const recorded = await testStore.record({ ...ref, kind: DIRECT, payload: { channel: TEST_CHANNEL, message, mayStart: false } satisfies Delivery });
    if (recorded === 'duplicate') return false;
    const accepted = this.waiters.waitFor(testStore, recorded.seq);
    this.workers.of(testStore).kick(ref);
    return (await accepted.settled).kind === 'continued';
  }

  // ---- Sessions -----------------------------------------------------------------------------

  /** A Session by id: in a step, stored, or recently ended. */
  async findSession(id: string): Promise<SessionRecord | undefined> {
    const active = this.active.get(id);
    if (active) return active;
    for (const store of this.environments.stores()) {
      const found = await store.sessionById(id).catch(() => undefined);
      if (found) return found;
    }
    return this.ended.find((s) => s.id === id);
  }

  /** Live Sessions of every store (newest activity first), at most `limit`. */
  async liveSessions(limit = 500): Promise<SessionRecord[]> {
    const byId = new Map<string, SessionRecord>();
    for (const session of this.active.all()) if (isLive(session)) byId.set(session.id, session);
    for (const store of this.environments.stores()) {
      for (const s of await store.list({ limit }).catch(() => [])) if (!byId.has(s.id)) byId.set(s.id, s);
    }
    return [...byId.values()].sort((a, b) => b.lastActivity - a.lastActivity).slice(0, limit);
  }

  async liveCount(): Promise<number> {
    let n = 0;
    for (const store of this.environments.stores()) n += await store.count({}).catch(() => 0);
    return n;
  }

  endedSessions(): SessionRecord[] {
    return [...this.ended];
  }

  /**
   * Ends a live Session from outside its flow (the Sessions view, a hang-up): recorded as an item
   * of its conversation, so it waits for a step in progress and survives a crash.
   */
  async end(session: SessionRecord, reason: string): Promise<void> {
    const store = session.isTest ? this.environments.testStore : this.environments.get(session.environment)?.store;
    if (!store) return;
    const ref = { environment: session.environment, conversation: session.key };
    const recorded = await this.health.guard(store, () => store.record({ ...ref, kind: END, payload: { sessionId: session.id, reason } }));
    if (recorded === 'duplicate') return;
    const accepted = this.waiters.waitFor(store, recorded.seq, ref);
    this.workers.of(store).kick(ref);
    await accepted.settled;
  }

  // ---- what Tasks do with a token ----------------------------------------------------------

  /** The live Session a token belongs to; undefined when it is not in a step (the token is dropped). */
  sessionOf(msg: unknown): SessionRecord | undefined {
    const id = (msg as TokenMessage | undefined)?.session?.id;
    if (typeof id !== 'string') return undefined;
    return this.active.live(id);
  }

  /** What a Task hands its Channel's behaviour. */
  taskContext(session: SessionRecord, msg: TokenMessage, node: RedNode): TaskContext {
    return { session, msg, node, files: this.files, log: (entry) => this.journal.addLog(session, entry) };
  }

  token(session: SessionRecord, payload?: unknown): TokenMessage {
    return this.journal.token(session, payload);
  }

  addHistory(session: SessionRecord, entry: Omit<HistoryEntry, 'at'>): void {
    this.journal.addHistory(session, entry);
  }

  addLog(session: SessionRecord, entry: Omit<SessionLogEntry, 'at'>): void {
    this.journal.addLog(session, entry);
  }

  /** Keeps received files within the inbound limits; skipped files go to the Session log. */
  keepFiles(session: SessionRecord, files: IncomingFile[], nodeId?: string): Promise<FileList> {
    return this.steps.keepFiles(session, files, nodeId);
  }

  /** The token reached a node that waits: the step ends here and is committed with the variables. */
  wait(session: SessionRecord, msg: TokenMessage, node: RedNode, opening = false): Promise<void> {
    return this.steps.wait(session, msg, node, opening);
  }

  /** EndTask: the Session is completed and its conversation released. */
  complete(session: SessionRecord, msg?: TokenMessage): Promise<void> {
    return this.steps.complete(session, msg);
  }

  /** An error nobody handles on the error branch ends the Session; the log keeps it. */
  fail(session: SessionRecord, error: TaskError, nodeId?: string): Promise<void> {
    return this.steps.fail(session, error, nodeId);
  }

  recordError(session: SessionRecord, error: TaskErrorInfo, nodeId: string): void {
    this.steps.recordError(session, error, nodeId);
  }

  /**
   * Ends a Session inside its own step (a waiting node's `resume` that decides the Session is
   * over, as Call out does when the call was not answered); `end` would queue behind this step.
   */
  endInStep(session: SessionRecord, reason: string): Promise<void> {
    return this.steps.endNow(session, reason);
  }

  /** Resolves when the Session waits or has ended. */
  whenSettled(session: SessionRecord): Promise<void> {
    return this.active.whenSettled(session);
  }

  /** Our own nodes call this after sending, so a token sent to no wire still ends the Session. */
  tokenMoved(session: SessionRecord): void {
    this.tracker.check(session.id);
  }

  // ---- plumbing -----------------------------------------------------------------------------

  private idleSeconds(channel: ChannelName): number {
    const timeouts = { ...DEFAULT_IDLE_TIMEOUT, ...(this.settings.idleTimeout ?? {}) };
    return timeouts[channel] ?? 24 * 3600;
  }

  private showServing(): void {
    this.status.showServing(this.allStarts(), (id) => this.environmentName(id));
  }
}

const engines = new WeakMap<object, Engine>();

/** One engine per Node-RED runtime; every node set of the package shares it. */
export function engineFor(red: RED): Engine {
  const key = runtimeKey(red);
  let engine = engines.get(key);
  if (!engine) {
    engine = new Engine(red);
    engines.set(key, engine);
  }
  return engine;
}
