import { TEST_CHANNEL, type ChannelName } from '../model/channels';
import type { Accepted, Acceptance, InboundReader } from './delivery';
import { TaskError, type TaskErrorInfo } from '../model/errors';
import { FileStore } from '../files/file-store';
import type { IncomingFile } from '../files/intake';
import type { FileList } from '../files/file-values';
import { DEFAULT_IDLE_TIMEOUT } from '../model/limits';
import { runtimeKey, type RED, type RedNode } from '../model/red';
import {
  HISTORY_LIMIT,
  LOG_LIMIT,
  isLive,
  type HistoryEntry,
  type SessionLogEntry,
  type SessionRecord,
  type SessionStory,
  type TokenMessage,
} from '../model/session';
import { StartStatus, type EnvironmentNote } from './start-status';
import { playedChannel, type InboundMessage, type StartRegistration } from './starts';
import { StoreUnavailable, type InboundItem, type SessionStore } from '../stores/session-store';
import { TokenTracker } from './token-tracker';
import { ActiveSessions, type Dropped } from './active-sessions';
import { ItemWaiters } from './item-waiters';
import { Registry, type WaitingNode } from './registry';
import { StepRunner } from './step-runner';
import { SessionOpening, newSessionId, type OutStart } from './session-opening';
import { TokenLifecycle } from './token-lifecycle';
import type { StepContext } from './step-context';
import { StoreHealth } from './store-health';
import type { ChannelBehaviour, TaskContext } from './behaviour';
import { Journal, type SessionEvent } from './journal';
import { Effects, unjournaled, type Effect, type EffectOptions, type EffectSend } from './effects';
import { Environments, type EnvironmentAttachment } from './environments';
import { Workers } from './workers';
import { Recovery } from './recovery';
import { WaitingCounts } from './waiting-counts';
import { installTokenHooks } from './token-hooks';
import { DIRECT, END, OUT_START, TEST_START } from './item-kinds';
import { Metrics, watchMetrics } from './metrics';
import { runtimeText } from '../model/texts';

export type { Accepted, Acceptance, Delivery, DeliveryOutcome, InboundReader } from './delivery';
export type { EnvironmentNote } from './start-status';
export type { WaitingNode } from './registry';
export type { OutStart } from './session-opening';
export { StepCut, unjournaled, type Effect, type EffectLookup, type EffectOptions, type EffectSend } from './effects';

/** Where an out node's request ended: a Session opened, the conversation has one already, or none could open. */
export type OutOutcome = { kind: 'started'; session: SessionRecord } | { kind: 'busy'; session: SessionRecord } | { kind: 'refused'; reason: string };
export type { SessionEvent } from './journal';
export type { EnvironmentAttachment } from './environments';

export interface EngineSettings {
  fileStorage?: 'workspace' | 'inline';
  workspaceQuota?: number;
  /** Seconds, by Channel. */
  idleTimeout?: Partial<Record<ChannelName, number>>;
  /** Seconds between looks for due timers and unhandled messages. */
  sweepInterval?: number;
  /** Milliseconds a step in progress on stopping nodes has to reach its wait or end (deploy-drain.ts). */
  deployDrain?: number;
}

/** How many ended Sessions the Sessions view can still show. */
const ENDED_KEPT = 100;

/**
 * The Session engine. It knows no provider: modules record inbound items for a conversation and
 * plug their behaviour for the standard Tasks in by Channel. Each conversation's items are handled
 * one at a time, and each step (one item, up to the Session's next wait or end) is committed to
 * the Environment's store in one atomic write.
 *
 * This class is the facade modules and nodes use; the work is done by its parts:
 * - `Registry`: what modules and deployed nodes plug in (behaviours, inbound kinds, starts, waiting nodes);
 * - `Environments`: the deployed Environments and their Session stores;
 * - `Workers` and `StepRunner`: each conversation's items, one step at a time, committed in one write;
 * - `SessionOpening`: a Session opened by an inbound message, an out node or a test;
 * - `TokenLifecycle`: a step's token until it waits, ends or stops;
 * - `Journal`: a Session's history, log and the events the editor follows;
 * - `Recovery`: timers, the sweep, deploys and restarts;
 * - `StartStatus`, `WaitingCounts`, `StoreHealth`: what the canvas shows.
 */
export class Engine {
  readonly files: FileStore;
  readonly settings: EngineSettings;
  /** This runtime's counters (webhooks, steps, provider calls, store faults): GET /channel-sessions/metrics. */
  readonly metrics = new Metrics();
  /** The runtime it runs in: what Tasks say on the canvas and in the log goes through its RED._. */
  readonly red: RED;
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
  private readonly steps: StepRunner;
  private readonly opening: SessionOpening;
  private readonly tokens: TokenLifecycle;
  private readonly recovery: Recovery;
  private readonly effects: Effects;
  /** Sessions that ended lately, with their history and log as they were then (their store no longer has them). */
  private readonly ended: Array<{ session: SessionRecord; story: SessionStory }> = [];

  constructor(red: RED) {
    this.red = red;
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
    this.tracker = new TokenTracker((id) => this.tokens.tokenStopped(id));
    const storeUnavailable = runtimeText(red, 'core', 'runtime.status.storeUnavailable');
    this.health = new StoreHealth(red, {
      environmentsOn: (store) =>
        this.environments
          .all()
          .filter((e) => e.store === store)
          .map((e) => e.attachment.id),
      showNote: (id, unavailable) => {
        if (unavailable) this.status.note(id, { fill: 'red', text: storeUnavailable });
        else if (this.status.noteOf(id)?.text === storeUnavailable) this.status.note(id, undefined);
        this.showServing();
      },
      resumed: () => void this.recovery.sweep(),
      fault: (store) => this.metrics.storeFault(store),
    });
    watchMetrics(red, this.metrics);
    this.effects = new Effects({ red, health: this.health, active: this.active });
    const stepContext: StepContext = {
      red,
      files: this.files,
      journal: this.journal,
      registry: this.registry,
      active: this.active,
      tracker: this.tracker,
      waiters: this.waiters,
      health: this.health,
      effects: this.effects,
      environment: (id) => this.environments.get(id),
      orderOf: (processId) => this.status.orderOf(processId),
      idleSeconds: (channel) => this.idleSeconds(channel),
      flowsRunning: () => this.recovery.flowsRunning,
      metrics: this.metrics,
      deploys: () => this.recovery.deploys,
      registerWaitingNode: (waiting) => this.registerWaitingNode(waiting),
      storyOf: (session) => this.storyOf(session),
      ended: (session, story) => {
        this.ended.push({ session, story });
        if (this.ended.length > ENDED_KEPT) this.ended.shift();
      },
      wakeAt: (due) => this.recovery.wakeAt(due),
      countsChanged: () => this.counts.changed(),
    };
    this.tokens = new TokenLifecycle(stepContext);
    this.opening = new SessionOpening(stepContext, this.tokens);
    this.steps = new StepRunner(stepContext, this.opening, this.tokens);
    this.workers = new Workers(red, {
      mayRun: (store) => this.recovery.stepsMayBegin || store === this.environments.openTestStore,
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
      tracker: this.tracker,
      timersOf: (session) => this.steps.timersOf(session),
      nodesHolding: (step) => this.tracker.nodesHolding(step),
      endOverdueSteps: () => this.tokens.endOverdueSteps(),
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

  /** What the standard Tasks of a Session say through: its Channel's behaviour, or the Test chat's for a test Session. */
  behaviourOf(session: SessionRecord): ChannelBehaviour {
    return this.registry.behaviourOf(session);
  }

  /** A module's kind of inbound item, and how to read it back into a Delivery (after a restart too). */
  registerInbound(kind: string, reader: InboundReader): void {
    this.registry.readers.set(kind, reader);
  }

  attachEnvironment(attachment: EnvironmentAttachment): void {
    this.status.lacks(attachment.id, undefined);
    this.environments.attach(attachment);
  }

  /**
   * A deploy removed the Environment's config node: the operator's health and metrics no longer
   * read it (its store may be gone with it). What the engine knows of it stays for its Sessions.
   */
  removeEnvironment(id: string): void {
    this.environments.remove(id);
  }

  /**
   * A deploy-time outcome of an Environment (auto-deploy set, skipped, refused). Config nodes show
   * no status in the editor, so it appears on the status of every start bound to the Environment.
   */
  noteEnvironment(id: string, note: EnvironmentNote): void {
    this.status.note(id, note);
    this.showServing();
  }

  /**
   * What an Environment lacks for its channel (credentials), shown in yellow on its starts beside
   * any other note until the next deploy; undefined when it lacks nothing.
   */
  noteMissing(id: string, missing: string | undefined): void {
    this.status.lacks(id, missing);
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

  /** A deployed start by node id (an out node reads the Environment it was registered with). */
  startAt(nodeId: string): StartRegistration | undefined {
    return this.registry.starts.get(nodeId);
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
   * An out node opens a Session toward a person: the request is recorded in the conversation's
   * store first (so it survives a crash and waits for a step in progress), then handled as a step
   * of that conversation. Resolves once the Session opened (its flow runs on from the node's
   * output 1), or with the live Session that conversation already has ('busy': nothing happened).
   * Rejects with StoreUnavailable when the request could not be recorded.
   */
  async openOut(environment: string, conversation: string, request: OutStart): Promise<OutOutcome> {
    const env = this.environments.get(environment);
    if (!env) throw new StoreUnavailable(`Environment ${environment} is not deployed`);
    await env.ready;
    const ref = { environment, conversation };
    const recorded = await this.health.guard(env.store, () => env.store.record({ ...ref, kind: OUT_START, payload: request }));
    if (recorded === 'duplicate') return { kind: 'refused', reason: 'the request was recorded before' };
    const accepted = this.waiters.waitFor(env.store, recorded.seq, ref);
    this.workers.of(env.store).kick(ref);
    const outcome = await accepted.opened;
    if (outcome.kind === 'started') return { kind: 'started', session: outcome.session };
    if (outcome.kind === 'existing' || outcome.kind === 'continued') return { kind: 'busy', session: outcome.session };
    return { kind: 'refused', reason: outcome.kind === 'refused' ? outcome.reason : 'the Session did not start' };
  }

  /** Whether the Environment's store remembers a key now (a mark a step set); false when it cannot say. */
  async remembered(environment: string, key: string): Promise<boolean> {
    const store = this.environments.get(environment)?.store;
    if (!store?.remembered) return false;
    return this.health.guard(store, () => store.remembered!(key));
  }

  /**
   * Why no Session may open at a start now: its Environment's maxSessions is reached (the check a
   * step makes before it opens one, said in the log and on the node as there); undefined when one
   * may. For a node that must not act for a Session that will be refused: Call out asks before it
   * queues a call and again before it places it, so nobody is rung only to be hung up.
   */
  async limitReached(environment: string, nodeId: string): Promise<string | undefined> {
    const env = this.environments.get(environment);
    const start = this.registry.starts.get(nodeId);
    if (!env || !start) return undefined;
    await env.ready;
    return this.health.guard(env.store, () => this.opening.limitReached(env.store, env, start));
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
    const active = this.active.carrying(environment, key);
    if (active) return active;
    const env = this.environments.get(environment);
    return env ? env.store.liveSession({ environment, conversation: key }) : undefined;
  }

  /**
   * Whether the conversation has an item recorded and not yet handled. Its step may be about to
   * open a Session that `liveSessionFor` cannot see yet (the step has not begun or not reached
   * its start, or it runs on another instance), so a module that would drop an item only a live
   * Session takes records it behind that one instead: its own step then finds the Session, or none.
   */
  async hasUnhandledItem(environment: string, key: string): Promise<boolean> {
    const env = this.environments.get(environment);
    return env ? (await env.store.next({ environment, conversation: key })) !== undefined : false;
  }

  /**
   * A test-chat Session at a chosen start: on the Chat Channel, or (`asChannel`) on the start's own
   * Channel with the Test chat as its transport, so the flow takes that Channel's paths. `from`: the
   * test Session whose flow opened this one at an out node (the Test chat follows it there).
   */
  async startTest(startNodeId: string, testData?: Record<string, unknown>, options: { asChannel?: boolean; from?: string } = {}): Promise<SessionRecord> {
    const start = this.registry.starts.get(startNodeId);
    if (!start) throw new TaskError(3005, `There is no deployed start node ${startNodeId}`);
    const channel = options.asChannel && start.kind.channel ? playedChannel(start, testData) : TEST_CHANNEL;
    const testStore = this.environments.testStore;
    const sessionId = newSessionId();
    const ref = { environment: start.environment ?? '', conversation: `test:${sessionId}` };
    const payload = { startNodeId, testData: testData ?? {}, sessionId, channel, ...(options.from ? { from: options.from } : {}) };
    const recorded = await testStore.record({ ...ref, kind: TEST_START, payload });
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
    // The Test chat's store is durable: the files go into the item as base64, read back by the step.
    const files = await Promise.all(
      message.files.map(async (f) => ({
        name: f.name,
        type: f.type,
        size: f.size,
        ...(f.skipReason ? { skipReason: f.skipReason } : { data: (await f.fetch()).toString('base64') }),
      })),
    );
    const payload = { channel: TEST_CHANNEL, message: { ...message, files }, mayStart: false };
    const recorded = await testStore.record({ ...ref, kind: DIRECT, payload });
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
    return this.ended.find((e) => e.session.id === id)?.session;
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

  /** Whether this runtime's flows run (false from flows:stopping until flows:started). */
  get running(): boolean {
    return this.recovery.flowsRunning;
  }

  /** Each deployed Environment with its module's Channels, its store, and whether that store opened (for health and metrics). */
  attachedEnvironments(): Array<{ id: string; name: string; moduleKey: string; channels: ChannelName[]; store: SessionStore; ready: Promise<void> }> {
    return this.environments.deployed().map((e) => ({
      id: e.attachment.id,
      name: e.attachment.name || e.attachment.id,
      moduleKey: e.attachment.moduleKey,
      channels: this.registry.channelsOf(e.attachment.moduleKey),
      store: e.store,
      ready: e.ready,
    }));
  }

  /** The Session stores of the deployed Environments (the test chat's too). */
  sessionStores(): SessionStore[] {
    return this.environments.stores('deployed');
  }

  async liveCount(): Promise<number> {
    let n = 0;
    for (const store of this.environments.stores()) n += await store.count({}).catch(() => 0);
    return n;
  }

  endedSessions(): SessionRecord[] {
    return this.ended.map((e) => e.session);
  }

  /**
   * A Session's history and log (the last HISTORY_LIMIT lines, the last LOG_LIMIT entries), for
   * what shows them: what its store keeps, then what a step not yet committed added; a Session
   * that ended, as they were at its end.
   */
  async storyOf(session: SessionRecord): Promise<SessionStory> {
    const ended = this.ended.find((e) => e.session === session);
    if (ended) return ended.story;
    const store = session.isTest ? this.environments.testStore : this.environments.get(session.environment)?.store;
    const [history, log] = store ? await Promise.all([store.history(session.id), store.sessionLog(session.id)]) : [[], []];
    return {
      history: [...history, ...(session.newHistory ?? [])].slice(-HISTORY_LIMIT),
      log: [...log, ...(session.newLog ?? [])].slice(-LOG_LIMIT),
    };
  }

  /**
   * Ends a live Session from outside its flow (the Sessions view, a hang-up): recorded as an item
   * of its conversation, so it waits for a step in progress and survives a crash. Resolves once it
   * is recorded; `done` once it is carried out (after the step in progress, if any).
   */
  async end(session: SessionRecord, reason: string): Promise<{ done: Promise<void> }> {
    const store = session.isTest ? this.environments.testStore : this.environments.get(session.environment)?.store;
    if (!store) return { done: Promise.resolve() };
    const ref = { environment: session.environment, conversation: session.key };
    const recorded = await this.health.guard(store, () => store.record({ ...ref, kind: END, payload: { sessionId: session.id, reason } }));
    if (recorded === 'duplicate') return { done: Promise.resolve() };
    const accepted = this.waiters.waitFor(store, recorded.seq, ref);
    this.workers.of(store).kick(ref);
    return { done: accepted.settled.then(() => undefined) };
  }

  // ---- what Tasks do with a token ----------------------------------------------------------

  /** The live Session a token belongs to; undefined when it is not in a step (the token is dropped). */
  sessionOf(msg: unknown): SessionRecord | undefined {
    return this.active.live(msg);
  }

  /** Why a token with a Session id found no Session: its step was cut by a deploy (and runs again), or the Session ended. */
  whyDropped(msg: unknown): Dropped {
    return this.active.whyDropped(msg);
  }

  /** What a Task hands its Channel's behaviour. */
  taskContext(session: SessionRecord, msg: TokenMessage, node: RedNode): TaskContext {
    return {
      session,
      msg,
      node,
      files: this.files,
      log: (entry) => this.journal.addLog(session, entry),
      remembered: (key) => this.remembered(session.environment, key),
      effect: this.effectFor(session),
    };
  }

  /** How a Task (or what it hands on, a stream) makes the provider effects of the Session's step (`TaskContext.effect`); without a Session, unjournaled. */
  effectFor(session: SessionRecord | undefined): Effect {
    return session ? (kind, send, options) => this.effects.forSession(session, kind, send, options) : unjournaled;
  }

  /**
   * A provider effect an item's reader makes in its step before the step has a Session (Call out
   * places its call so), journaled as a Task's (`TaskContext.effect`).
   */
  itemEffect<T>(item: InboundItem, kind: string, send: EffectSend<T>, options?: EffectOptions<T>): Promise<T> {
    return this.effects.forItem(item, kind, send, options);
  }

  token(session: SessionRecord, payload?: unknown): TokenMessage {
    return this.tokens.token(session, payload);
  }

  addHistory(session: SessionRecord, entry: Omit<HistoryEntry, 'at'>): void {
    this.journal.addHistory(session, entry);
  }

  /** The text so far of an answer still being written, for the editor to show as it grows (never kept). */
  draft(session: SessionRecord, text: string): void {
    this.journal.draft(session, text);
  }

  addLog(session: SessionRecord, entry: Omit<SessionLogEntry, 'at'>): void {
    this.journal.addLog(session, entry);
  }

  /** Keeps received files within the inbound limits; skipped files go to the Session log. */
  keepFiles(session: SessionRecord, files: IncomingFile[], nodeId?: string): Promise<FileList> {
    return this.opening.keepFiles(session, files, nodeId);
  }

  /** The token reached a node that waits: the step ends here and is committed with the variables. */
  wait(session: SessionRecord, msg: TokenMessage, node: RedNode, opening = false): Promise<void> {
    return this.tokens.wait(session, msg, node, opening);
  }

  /** EndTask: the Session is completed and its conversation released. */
  complete(session: SessionRecord, msg?: TokenMessage): Promise<void> {
    return this.tokens.complete(session, msg);
  }

  /** An error nobody handles on the error branch ends the Session; the log keeps it. */
  fail(session: SessionRecord, error: TaskError, nodeId?: string): Promise<void> {
    return this.tokens.fail(session, error, nodeId);
  }

  recordError(session: SessionRecord, error: TaskErrorInfo, nodeId: string): void {
    this.tokens.recordError(session, error, nodeId);
  }

  /**
   * Ends a Session inside its own step (a waiting node's `resume` that decides the Session is
   * over, as Call out does when the call was not answered); `end` would queue behind this step.
   */
  endInStep(session: SessionRecord, reason: string): Promise<void> {
    return this.tokens.endNow(session, reason);
  }

  /** Resolves when the Session waits or has ended. */
  whenSettled(session: SessionRecord): Promise<void> {
    return this.active.whenSettled(session);
  }

  /** Our own nodes call this after sending, so a token sent to no wire still ends the Session. */
  tokenMoved(session: SessionRecord): void {
    const step = this.active.stepOf(session);
    if (step !== undefined) this.tracker.check(step);
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
