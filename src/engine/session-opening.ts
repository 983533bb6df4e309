import { createHash, randomBytes } from 'node:crypto';
import { CHANNEL_WORDS, TEST_CHANNEL, type ChannelName } from '../model/channels';
import type { Delivery, DeliveryOutcome } from './delivery';
import { TaskError } from '../model/errors';
import { receiveFiles, type IncomingFile } from '../files/intake';
import { fileList, type FileList } from '../files/file-values';
import type { ItemWaiter } from './item-waiters';
import { holdOpeningAnswer } from './opening-answer';
import { SESSION_FORMAT, type SessionRecord } from '../model/session';
import { chooseStart, type Opening, type StartRegistration } from './starts';
import type { InboundItem, SessionStore } from '../stores/session-store';
import type { StepContext, StepEnvironment } from './step-context';
import type { TokenLifecycle } from './token-lifecycle';
import type { StepJournal } from './effects';
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

/** What a Session is opened with besides its conversation and flow (which the item and the start give). */
type Opened = Pick<SessionRecord, 'channel' | 'isTest' | 'binding' | 'person'>;

/**
 * How a step opens a Session, in one of three ways: an inbound message at the start that serves
 * its Environment, an out node's request at that node, or a test started from the test chat. Each
 * way opens it the same way (`openSession`): the Session is the step's to commit, in memory as in
 * progress, the route waiting for the item hears it started, and its token leaves the start.
 */
export class SessionOpening {
  constructor(
    private readonly ctx: StepContext,
    private readonly tokens: TokenLifecycle,
  ) {}

  /** An inbound message that may start a Session, when its conversation has none live. */
  async openAtStart(
    store: SessionStore,
    env: StepEnvironment,
    item: InboundItem,
    delivery: Delivery,
    step: { session?: SessionRecord; journal?: StepJournal },
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
    const session = this.openSession(item, start, step, waiter, {
      channel: delivery.channel,
      isTest: false,
      binding: delivery.binding ?? {},
      ...(delivery.person ? { person: delivery.person } : {}),
    });
    const files = delivery.keepOpeningFiles === false ? fileList([]) : await this.keepFiles(session, delivery.message.files, start.node.id);
    const opening = delivery.opening
      ? delivery.opening(session, files)
      : { text: delivery.message.text, files: files.count ? files.names.split(', ') : undefined };
    this.begin(start, session, opening);
    return this.started(session);
  }

  /**
   * An out node's request: when the conversation has a live Session it is left alone ('existing',
   * the node's error branch says so); otherwise a Session opens at the node with the request's
   * first variables, and the flow runs on from its output 1 as from a start.
   */
  async openAtOutNode(
    store: SessionStore,
    item: InboundItem,
    live: SessionRecord | undefined,
    step: { session?: SessionRecord; journal?: StepJournal },
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
    const vars = request.vars && typeof request.vars === 'object' && !Array.isArray(request.vars) ? request.vars : undefined;
    const session = this.openSession(item, start, step, waiter, { channel: request.channel, isTest: false, binding: request.binding ?? {} }, { vars });
    this.begin(start, session, { ...request.opening, text: request.opening.text ?? '' });
    return this.started(session);
  }

  /** A test started from the test chat, at the start it names, with its test data; it may wait for the opening message. */
  async openForTest(item: InboundItem, step: { session?: SessionRecord; journal?: StepJournal }, waiter: ItemWaiter | undefined): Promise<DeliveryOutcome> {
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
    const binding = { testData: data, ...(from ? { openedFrom: from } : {}) };
    const session = this.openSession(item, start, step, waiter, { channel: channel ?? TEST_CHANNEL, isTest: true, binding }, { id: sessionId });
    const opening = start.kind.testOpening ? start.kind.testOpening(data, session.channel) : { text: '' };
    if (opening) this.begin(start, session, opening);
    else this.waitForOpening(start, session);
    return this.started(session);
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

  /**
   * The Session opens in the item's conversation, in the flow of its start: it is the step's to
   * commit, in memory as in progress, and the route waiting for the item hears it started.
   */
  private openSession(
    item: InboundItem,
    start: StartRegistration,
    step: { session?: SessionRecord; journal?: StepJournal },
    waiter: ItemWaiter | undefined,
    opened: Opened,
    { id = sessionIdOf(item), vars }: { id?: string; vars?: Record<string, unknown> } = {},
  ): SessionRecord {
    const now = Date.now();
    const session: SessionRecord = {
      v: SESSION_FORMAT,
      id,
      channel: opened.channel,
      environment: item.environment,
      process: start.node.z ?? '',
      key: item.conversation,
      isTest: opened.isTest,
      binding: opened.binding,
      ...(opened.person ? { person: opened.person } : {}),
      vars: {},
      historyLines: 0,
      logLines: 0,
      created: now,
      lastActivity: now,
      state: 'running',
    };
    if (vars) session.vars = { ...vars };
    step.session = session;
    this.ctx.active.activate(session, this.ctx.deploys());
    if (step.journal) this.ctx.effects.bind(session, step.journal);
    waiter?.opened({ kind: 'started', session });
    return session;
  }

  /** The opened Session's token has settled (it waits, or the Session ended): the step is ready to commit. */
  private async started(session: SessionRecord): Promise<DeliveryOutcome> {
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
    const token = this.tokens.token(session, opening.text);
    // An out node opens a Session on the Channel its request names (Text out: SMS or WhatsApp).
    const wrongChannel = start.kind.channel !== null && !start.kind.outbound && !session.isTest && start.kind.channel !== session.channel;
    if (wrongChannel) {
      const error = new TaskError(8025, `This start serves ${start.kind.channel}; the Session came on ${session.channel} and ends`);
      start.node.error(error, { ...token, error: error.toInfo() });
      void this.tokens.fail(session, error, start.node.id);
      return;
    }
    if (start.kind.channel !== null && opening.value) session.vars[start.variable || 'variable'] = opening.value;
    if (start.kind.channel === null && opening.answersFirstInput) holdOpeningAnswer(session, opening.answersFirstInput);
    if (opening.waits) {
      void this.tokens.wait(session, token, start.node);
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
    void this.tokens.wait(session, this.tokens.token(session), start.node, true);
  }
}

export function newSessionId(): string {
  return randomBytes(12).toString('hex');
}

/**
 * The id of the Session an item opens, the same each time the item's step runs: a step cut after
 * it sent something runs again and opens the same Session, so its effects have the same keys
 * (effects.ts) and are found in its journal, or at the provider, instead of sent again.
 */
export function sessionIdOf(item: InboundItem): string {
  return createHash('sha256')
    .update(JSON.stringify([item.environment, item.conversation, item.seq, item.at]))
    .digest('hex')
    .slice(0, 24);
}
