import { randomBytes } from 'node:crypto';
import { TEST_CHANNEL, type ChannelName } from './channels';
import { ConversationQueues } from './conversation-queue';
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
import { SessionStore, type ContextLike } from './session-store';
import { chooseStart, type InboundMessage, type Opening, type StartRegistration } from './starts';
import { TokenTracker } from './token-tracker';
import type { ChannelBehaviour } from './behaviour';

/** A deploy-time outcome shown beside "serves <Environment>" on its starts. */
export interface EnvironmentNote {
  fill: 'green' | 'yellow' | 'red';
  text: string;
}

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

export interface Delivery {
  environment: string;
  channel: ChannelName;
  /** The conversation key, unique within the Environment (Session Mode, number pair, call id). */
  key: string;
  message: InboundMessage;
  /** Whether this message may open a Session when none is live (Start-sessions-from rules). */
  mayStart: boolean;
  /** Channel data a new Session keeps (where to reply). */
  binding?: Record<string, unknown>;
  /** Builds the start variable once the opening message's files are kept. */
  opening?(session: SessionRecord, files: FileList): Opening;
  /** Whether the opening message's files are downloaded (team chat needs `files:read`). */
  keepOpeningFiles?: boolean;
  /**
   * Start endpoints: only open a Session; when the conversation already has a live one, leave it
   * untouched and answer `existing` (checked inside the conversation queue, so it cannot race).
   */
  startOnly?: boolean;
}

export type DeliveryOutcome =
  | { kind: 'started' | 'continued'; session: SessionRecord }
  | { kind: 'existing'; session: SessionRecord }
  | { kind: 'ignored' }
  | { kind: 'refused'; reason: string };

export interface SessionEvent {
  type: 'history' | 'log' | 'state';
  session: SessionRecord;
  entry?: HistoryEntry | SessionLogEntry;
}

interface EnvironmentState {
  attachment: EnvironmentAttachment;
  store: SessionStore;
  ready: Promise<void>;
  live: number;
}

export interface EngineSettings {
  fileStorage?: 'workspace' | 'inline';
  workspaceQuota?: number;
  /** Seconds, by Channel. */
  idleTimeout?: Partial<Record<ChannelName, number>>;
  /** Seconds between idle-expiry sweeps. */
  sweepInterval?: number;
}

const ENDED_KEPT = 100;

/**
 * The Session engine. It knows no provider: modules hand it inbound messages with a conversation
 * key and plug their behaviour for the standard Tasks in by Channel.
 */
export class Engine {
  readonly files: FileStore;
  readonly settings: EngineSettings;
  private readonly sessions = new Map<string, SessionRecord>();
  private readonly conversations = new Map<string, string>();
  private readonly queues = new ConversationQueues();
  private readonly environments = new Map<string, EnvironmentState>();
  private readonly starts = new Map<string, StartRegistration>();
  private readonly waitingNodes = new Map<string, WaitingNode>();
  private readonly behaviours = new Map<ChannelName, ChannelBehaviour>();
  private readonly moduleOfChannel = new Map<ChannelName, string>();
  private readonly settleWaiters = new Map<string, Array<() => void>>();
  private readonly waitTimers = new Map<string, NodeJS.Timeout>();
  private readonly waitingCounts = new Map<string, number>();
  private readonly listeners = new Set<(event: SessionEvent) => void>();
  private readonly ended: SessionRecord[] = [];
  private readonly tracker: TokenTracker;
  private processOrder = new Map<string, number>();
  private processNames = new Map<string, string>();
  private sweeper: NodeJS.Timeout | undefined;
  private statusTimer: NodeJS.Timeout | undefined;
  private readonly dirtyStatus = new Set<string>();
  private readonly environmentNotes = new Map<string, EnvironmentNote>();

  constructor(private readonly red: RED) {
    this.settings = (red.settings.channelSessions ?? {}) as EngineSettings;
    this.files = new FileStore(String(red.settings.userDir ?? process.cwd()), this.settings);
    this.tracker = new TokenTracker((id) => this.tokenStopped(id));
    this.installHooks();
    red.events.on('flows:started', () => this.afterDeploy());
    const every = Math.max(0.05, this.settings.sweepInterval ?? 60) * 1000;
    this.sweeper = setInterval(() => this.expireIdle(), every);
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

  attachEnvironment(attachment: EnvironmentAttachment): void {
    this.environmentNotes.delete(attachment.id);
    const existing = this.environments.get(attachment.id);
    if (existing) {
      existing.attachment = attachment;
      existing.store.rebind(attachment.context);
      return;
    }
    const store = new SessionStore(attachment.context, attachment.sessionStore || undefined);
    const state: EnvironmentState = { attachment, store, ready: Promise.resolve(), live: 0 };
    state.ready = this.restore(state);
    this.environments.set(attachment.id, state);
  }

  /**
   * A deploy-time outcome of an Environment (auto-deploy set, skipped, refused). Config nodes show
   * no status in the editor, so it appears on the status of every start bound to the Environment.
   */
  noteEnvironment(id: string, note: EnvironmentNote): void {
    this.environmentNotes.set(id, note);
    this.reportServingStarts();
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
    for (const session of this.sessions.values()) {
      if (session.waitingAt?.nodeId === waiting.node.id) this.armTimer(session, waiting);
    }
    this.refreshStatus(waiting.node.id);
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
   * Hands an inbound message to its conversation: continues the live Session waiting for it, or
   * opens one at the start that serves the Environment and Channel. Resolves once the Session
   * waits or ends again, so the events of one conversation are handled one at a time, in order.
   */
  deliver(delivery: Delivery): Promise<DeliveryOutcome> {
    const conversation = conversationKey(delivery.environment, delivery.key);
    return this.queues.run(conversation, async () => {
      const env = this.environments.get(delivery.environment);
      if (!env) return { kind: 'refused', reason: `Environment ${delivery.environment} is not deployed` } as const;
      await env.ready;
      let session = this.liveSession(conversation);
      if (session && delivery.startOnly) return { kind: 'existing', session } as const;
      if (session) {
        await this.whenSettled(session);
        session = isLive(session) ? session : undefined;
      }
      if (session) {
        session.lastActivity = Date.now();
        const continued = await this.continueSession(session, delivery.message);
        if (continued) return { kind: 'continued', session } as const;
      }
      if (!delivery.mayStart) return { kind: 'ignored' } as const;
      return this.open(env, conversation, delivery);
    });
  }

  /** Test chat and the start endpoints: a message to a known Session, through its conversation queue. */
  deliverToSession(sessionId: string, message: InboundMessage): Promise<boolean> {
    const session = this.sessions.get(sessionId);
    if (!session) return Promise.resolve(false);
    return this.queues.run(conversationKey(session.environment, session.key), async () => {
      await this.whenSettled(session);
      if (!isLive(session)) return false;
      session.lastActivity = Date.now();
      return this.continueSession(session, message);
    });
  }

  /** Whether a conversation has a live Session (start endpoints do nothing then). */
  liveSessionFor(environment: string, key: string): SessionRecord | undefined {
    return this.liveSession(conversationKey(environment, key));
  }

  /** A test-chat Session at a chosen start, on the Chat Channel. */
  async startTest(startNodeId: string, testData?: Record<string, unknown>): Promise<SessionRecord> {
    const start = this.starts.get(startNodeId);
    if (!start) throw new TaskError(3005, `There is no deployed start node ${startNodeId}`);
    const data = { ...start.testData, ...(testData ?? {}) };
    const environment = start.environment ?? '';
    const session = this.createSession({
      channel: TEST_CHANNEL, environment, process: start.node.z ?? '', key: '', isTest: true, binding: { testData: data },
    });
    session.key = `test:${session.id}`;
    this.sessions.set(session.id, session);
    this.conversations.set(conversationKey(environment, session.key), session.id);
    await this.queues.run(conversationKey(environment, session.key), async () => {
      const opening = start.kind.testOpening ? start.kind.testOpening(data) : { text: '' };
      if (opening) this.begin(start, session, opening);
      else this.waitForOpening(start, session);
      await this.whenSettled(session);
    });
    return session;
  }

  // ---- Sessions -----------------------------------------------------------------------------

  session(id: string): SessionRecord | undefined {
    return this.sessions.get(id) ?? this.ended.find((s) => s.id === id);
  }

  liveSessions(): SessionRecord[] {
    return [...this.sessions.values()];
  }

  liveCount(): number {
    return this.sessions.size;
  }

  endedSessions(): SessionRecord[] {
    return [...this.ended];
  }

  token(session: SessionRecord, payload?: unknown): TokenMessage {
    return { _msgid: this.red.util.generateId(), session: sessionRef(session), vars: session.vars, payload };
  }

  /** The live Session a token belongs to; undefined when it has ended (the token is dropped). */
  sessionOf(msg: unknown): SessionRecord | undefined {
    const id = (msg as TokenMessage | undefined)?.session?.id;
    if (typeof id !== 'string') return undefined;
    const session = this.sessions.get(id);
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

  /** The token reached a node that waits: save the variables and where it waits. */
  async wait(session: SessionRecord, msg: TokenMessage, node: RedNode, opening = false): Promise<void> {
    if (!isLive(session)) return;
    session.vars = msg.vars ?? session.vars;
    session.waitingAt = { nodeId: node.id, nodeType: node.type, since: Date.now(), ...(opening ? { opening } : {}) };
    session.state = 'waiting';
    this.countWaiting(node.id, +1);
    const waiting = this.waitingNodes.get(node.id);
    if (waiting) this.armTimer(session, waiting);
    await this.persist(session);
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

  /** Ends a live Session from outside its flow (the Sessions view, a removed node, expiry). */
  end(session: SessionRecord, reason: string): Promise<void> {
    this.addLog(session, { level: 'info', message: reason });
    return this.finish(session, 'ended', reason);
  }

  /** Resolves when the Session waits or has ended. */
  whenSettled(session: SessionRecord): Promise<void> {
    if (session.state !== 'running') return Promise.resolve();
    return new Promise((resolve) => {
      const waiters = this.settleWaiters.get(session.id) ?? [];
      waiters.push(resolve);
      this.settleWaiters.set(session.id, waiters);
    });
  }

  /** Our own nodes call this after sending, so a token sent to no wire still ends the Session. */
  tokenMoved(session: SessionRecord): void {
    this.tracker.check(session.id);
  }

  recordError(session: SessionRecord, error: TaskErrorInfo, nodeId: string): void {
    this.addLog(session, { level: 'error', code: error.code, message: error.message, nodeId });
  }

  // ---- internals ----------------------------------------------------------------------------

  private async open(env: EnvironmentState, conversation: string, delivery: Delivery): Promise<DeliveryOutcome> {
    const moduleKey = this.moduleOfChannel.get(delivery.channel) ?? '';
    const start = chooseStart([...this.starts.values()], delivery.environment, delivery.channel, moduleKey, (p) => this.orderOf(p));
    const name = env.attachment.name || env.attachment.id;
    if (!start) {
      const reason = `No Process has a start for Environment "${name}" (${delivery.channel}); the message starts nothing`;
      this.red.log.warn(`[channel-sessions] ${reason}`);
      return { kind: 'refused', reason };
    }
    const limit = env.attachment.maxSessions;
    if (limit > 0 && env.live >= limit) {
      const reason = `Environment "${name}" has reached its limit of ${limit} live Sessions (maxSessions); the Session did not start`;
      this.red.log.warn(`[channel-sessions] ${reason}`);
      start.node.status({ fill: 'red', shape: 'ring', text: `limit of ${limit} Sessions reached` });
      return { kind: 'refused', reason };
    }
    const session = this.createSession({
      channel: delivery.channel, environment: delivery.environment, process: start.node.z ?? '',
      key: delivery.key, isTest: false, binding: delivery.binding ?? {},
    });
    this.sessions.set(session.id, session);
    this.conversations.set(conversation, session.id);
    env.live++;
    await this.persist(session);
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
    if (!waitPoint) return false;
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
    if (session.waitingAt) this.countWaiting(session.waitingAt.nodeId, -1);
    this.clearTimer(session.id);
    session.waitingAt = undefined;
    session.state = 'running';
    session.lastActivity = Date.now();
    this.emit({ type: 'state', session });
  }

  private endAtRemovedNode(session: SessionRecord): Promise<void> {
    const at = session.waitingAt;
    const reason = `Session ${session.id} ended: the ${at?.nodeType ?? 'node'} it was waiting at (${at?.nodeId}) was removed from the flows`;
    this.red.log.warn(`[channel-sessions] ${reason}`);
    return this.end(session, reason);
  }

  private async finish(session: SessionRecord, state: 'completed' | 'ended', reason: string): Promise<void> {
    if (!isLive(session)) return;
    if (session.waitingAt) this.countWaiting(session.waitingAt.nodeId, -1);
    this.clearTimer(session.id);
    session.state = state;
    session.endReason = reason;
    session.waitingAt = undefined;
    session.lastActivity = Date.now();
    this.tracker.forget(session.id);
    this.sessions.delete(session.id);
    const conversation = conversationKey(session.environment, session.key);
    if (this.conversations.get(conversation) === session.id) this.conversations.delete(conversation);
    const env = this.environments.get(session.environment);
    if (env && !session.isTest) {
      env.live = Math.max(0, env.live - 1);
      await env.store.remove(session.id).catch((err: Error) => this.red.log.warn(`[channel-sessions] ${err.message}`));
    }
    this.ended.push(session);
    if (this.ended.length > ENDED_KEPT) this.ended.shift();
    this.behaviours.get(session.channel)?.sessionEnded?.(session);
    void this.files.forget(session.id).catch(() => undefined);
    this.emit({ type: 'state', session });
    this.settle(session);
  }

  private createSession(fields: Pick<SessionRecord, 'channel' | 'environment' | 'process' | 'key' | 'isTest' | 'binding'>): SessionRecord {
    const now = Date.now();
    return {
      id: randomBytes(12).toString('hex'),
      ...fields,
      vars: {},
      history: [],
      log: [],
      created: now,
      lastActivity: now,
      state: 'running',
    };
  }

  private liveSession(conversation: string): SessionRecord | undefined {
    const id = this.conversations.get(conversation);
    const session = id ? this.sessions.get(id) : undefined;
    return session && isLive(session) ? session : undefined;
  }

  private settle(session: SessionRecord): void {
    const waiters = this.settleWaiters.get(session.id);
    if (!waiters) return;
    this.settleWaiters.delete(session.id);
    for (const resolve of waiters) resolve();
  }

  private tokenStopped(sessionId: string): void {
    const session = this.sessions.get(sessionId);
    if (!session || session.state !== 'running') return;
    const reason = 'The flow stopped without reaching an EndTask or a wait; the Session ended';
    this.addLog(session, { level: 'info', message: reason });
    void this.finish(session, 'ended', reason);
  }

  private async persist(session: SessionRecord): Promise<void> {
    if (session.isTest) return;
    const env = this.environments.get(session.environment);
    if (!env) return;
    try {
      await env.store.save(session);
    } catch (err) {
      this.red.log.warn(`[channel-sessions] Session ${session.id} could not be saved: ${(err as Error).message}`);
    }
  }

  private async restore(env: EnvironmentState): Promise<void> {
    let found: SessionRecord[];
    try {
      found = await env.store.loadAll();
    } catch (err) {
      this.red.log.warn(`[channel-sessions] Sessions of "${env.attachment.name}" could not be read: ${(err as Error).message}`);
      return;
    }
    for (const session of found) {
      if (!isLive(session) || this.sessions.has(session.id)) continue;
      // A Session cut off while running has no token any more; only waiting ones can go on.
      if (session.state !== 'waiting' || !session.waitingAt) {
        await env.store.remove(session.id).catch(() => undefined);
        continue;
      }
      this.sessions.set(session.id, session);
      this.conversations.set(conversationKey(session.environment, session.key), session.id);
      env.live++;
      this.countWaiting(session.waitingAt.nodeId, +1);
      const waiting = this.waitingNodes.get(session.waitingAt.nodeId);
      if (waiting) this.armTimer(session, waiting);
    }
    if (found.length) this.red.log.info(`[channel-sessions] Environment "${env.attachment.name}": ${env.live} waiting Sessions restored`);
  }

  private armTimer(session: SessionRecord, waiting: WaitingNode): void {
    this.clearTimer(session.id);
    const seconds = waiting.timeoutSeconds ?? 0;
    if (!(seconds > 0) || !waiting.timedOut || !session.waitingAt) return;
    const since = session.waitingAt.since;
    const delay = Math.max(0, since + seconds * 1000 - Date.now());
    const timer = setTimeout(() => {
      this.waitTimers.delete(session.id);
      void this.queues.run(conversationKey(session.environment, session.key), async () => {
        if (session.state !== 'waiting' || session.waitingAt?.since !== since) return;
        const current = this.waitingNodes.get(session.waitingAt.nodeId);
        if (!current?.timedOut) return;
        this.leaveWait(session);
        this.tracker.hold(session.id);
        try {
          await current.timedOut(session, this.token(session));
        } finally {
          this.tracker.release(session.id);
        }
        await this.whenSettled(session);
      });
    }, delay);
    timer.unref();
    this.waitTimers.set(session.id, timer);
  }

  private clearTimer(sessionId: string): void {
    const timer = this.waitTimers.get(sessionId);
    if (timer) clearTimeout(timer);
    this.waitTimers.delete(sessionId);
  }

  private expireIdle(): void {
    const now = Date.now();
    const timeouts = { ...DEFAULT_IDLE_TIMEOUT, ...(this.settings.idleTimeout ?? {}) };
    for (const session of this.sessions.values()) {
      if (session.state !== 'waiting') continue;
      const seconds = timeouts[session.channel] ?? 24 * 3600;
      if (now - session.lastActivity < seconds * 1000) continue;
      const conversation = conversationKey(session.environment, session.key);
      void this.queues.run(conversation, async () => {
        if (session.state !== 'waiting' || Date.now() - session.lastActivity < seconds * 1000) return;
        await this.end(session, `Session expired after ${seconds} s without a message; its conversation is released`);
      });
    }
  }

  private afterDeploy(): void {
    this.processOrder = new Map();
    this.processNames = new Map();
    const ids = new Set<string>();
    let index = 0;
    this.red.nodes.eachNode((n) => {
      ids.add(n.id);
      if (n.type === 'tab') {
        this.processOrder.set(n.id, index++);
        this.processNames.set(n.id, String(n.label ?? n.id));
      }
    });
    for (const session of [...this.sessions.values()]) {
      const at = session.waitingAt;
      if (session.state === 'waiting' && at && !ids.has(at.nodeId)) {
        void this.queues.run(conversationKey(session.environment, session.key), async () => {
          if (session.waitingAt?.nodeId === at.nodeId && !this.waitingNodes.has(at.nodeId)) await this.endAtRemovedNode(session);
        });
      }
    }
    this.reportServingStarts();
  }

  /** Two Processes bound to one Environment and Channel: one serves; both say so. */
  private reportServingStarts(): void {
    const groups = new Map<string, StartRegistration[]>();
    for (const start of this.starts.values()) {
      const bindings: string[] = [];
      if (start.kind.channel && start.environment) bindings.push(`${start.environment}|${start.kind.channel}`);
      for (const [moduleKey, env] of Object.entries(start.serves ?? {})) if (env) bindings.push(`${env}|shared:${moduleKey}`);
      for (const binding of bindings) groups.set(binding, [...(groups.get(binding) ?? []), start]);
    }
    for (const [binding, starts] of groups) {
      const [envId, channel] = binding.split('|');
      starts.sort((a, b) => this.orderOf(a.node.z ?? '') - this.orderOf(b.node.z ?? '') || a.node.id.localeCompare(b.node.id));
      const envName = this.environmentName(envId);
      const note = this.environmentNotes.get(envId);
      const withNote = (text: string) => (note ? `${text} · ${note.text}` : text);
      if (starts.length === 1) {
        starts[0].node.status({ fill: note && note.fill !== 'green' ? note.fill : 'green', shape: 'ring', text: withNote(`serves ${envName}`) });
        continue;
      }
      const winner = this.processNames.get(starts[0].node.z ?? '') ?? starts[0].node.z;
      const others = starts.slice(1).map((s) => this.processNames.get(s.node.z ?? '') ?? s.node.z);
      this.red.log.warn(`[channel-sessions] Environment "${envName}" (${channel}) has starts in ${starts.length} Processes: "${winner}" serves (first in flow order); ${others.map((o) => `"${o}"`).join(', ')} not`);
      starts[0].node.status({ fill: note?.fill === 'red' ? 'red' : 'yellow', shape: 'dot', text: withNote(`serves ${envName}; also bound in ${others.join(', ')}`) });
      for (const start of starts.slice(1)) {
        start.node.status({ fill: 'yellow', shape: 'ring', text: `not serving: "${winner}" serves ${envName}` });
      }
    }
  }

  private orderOf(processId: string): number {
    return this.processOrder.get(processId) ?? Number.MAX_SAFE_INTEGER;
  }

  private countWaiting(nodeId: string, delta: number): void {
    this.waitingCounts.set(nodeId, Math.max(0, (this.waitingCounts.get(nodeId) ?? 0) + delta));
    this.refreshStatus(nodeId);
  }

  /** Waiting counts in node status, at most twice a second however busy. */
  private refreshStatus(nodeId: string): void {
    this.dirtyStatus.add(nodeId);
    if (this.statusTimer) return;
    this.statusTimer = setTimeout(() => {
      this.statusTimer = undefined;
      for (const id of this.dirtyStatus) {
        const waiting = this.waitingNodes.get(id);
        const count = this.waitingCounts.get(id) ?? 0;
        waiting?.node.status(count ? { fill: 'blue', shape: 'ring', text: `${count} waiting` } : {});
      }
      this.dirtyStatus.clear();
    }, 500);
    this.statusTimer.unref();
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
      return typeof id === 'string' && this.sessions.has(id) ? id : undefined;
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

function conversationKey(environment: string, key: string): string {
  return `${environment}\u0000${key}`;
}

let current: Engine | undefined;

/** One engine per Node-RED runtime; every node set of the package shares it. */
export function engineFor(red: RED): Engine {
  if (!current) current = new Engine(red);
  return current;
}
