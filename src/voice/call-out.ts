import { randomBytes } from 'node:crypto';
import { textOf } from '../model/text';
import type twilio from 'twilio';
import type { Delivery, Engine } from '../engine/engine';
import type { Opening, StartKind } from '../engine/starts';
import { setUpStartNode } from '../kit/start-node';
import { readField } from '../kit/typed-field';
import { errorStatus } from '../kit/task-runner';
import { TaskError } from '../model/errors';
import { resolvePlaceholders } from '../model/placeholders';
import type { Done, RED, RedNode, Send } from '../model/red';
import { runtimeText } from '../model/texts';
import type { SessionRecord, TokenMessage } from '../model/session';
import { StoreUnavailable, type InboundItem, type SessionStore } from '../stores/session-store';
import { StepCut } from '../engine/effects';
import { TwilioAnswerCutOff, TwilioConnectionLost, TwilioFault, TwilioTimeout } from '../telco/twilio-faults';
import { restSettingsError } from '../telco/twilio-account';
import { twilioRestClient } from '../telco/twilio-http-client';
import { SAMPLE_CALLED, SAMPLE_CALLER, type CallVariable } from './call-variable';
import { missingCredentials, type VoiceEnvironment } from './environment';
import { isE164 } from '../model/phone-number';
import { testVars } from '../model/test-vars';
import type { VoiceModule } from './voice-module';
import { callOutUrl, startPath, statusPath } from './urls';

export const CALL_OUT_TYPE = 'telco-call-out';

/** Each voice Environment's calls out wait in this conversation, placed one at a time, in order. */
export const CALL_OUT_QUEUE = 'call-out';
const REQUEST_KIND = 'voice-call-out';
const PLACED_KIND = 'voice-call-placed';
export const STATUS_KIND = 'voice-call-status';

/** Outputs (0-based): answered by a person, error branch, not answered, answered by a machine. */
const PERSON = 0;
const ERROR = 1;
const NOT_ANSWERED = 2;
const MACHINE = 3;

/** Final call states of a call nobody answered (output 3). */
export const UNANSWERED = new Set(['busy', 'no-answer', 'failed', 'canceled']);
const MACHINE_DETECTION = new Set(['', 'Enable', 'DetectMessageEnd']);
/** The provider rings for 5 to 600 seconds. */
const RING_MIN = 5;
const RING_MAX = 600;
const DEFAULT_RING = 30;
/** A request's "placing it now" mark: long enough to outlive any restart that runs its step again. */
const ATTEMPT_KEPT_MS = 7 * 24 * 3600 * 1000;
/** An input message asks once for a call to one person (its `_msgid` and the number) for this long. */
const INPUT_KEPT_MS = 24 * 3600 * 1000;
/** Calls placed lately that a queued request for the same person is checked against (4030). */
const RECENT_CALLS_KEPT = 10_000;
/** How long the Calls API may take to answer, unless settings say otherwise. */
const DEFAULT_API_TIMEOUT_S = 10;
/** The input message kept with a queued call, at most (its JSON). */
const KEPT_MESSAGE_MAX = 64 * 1024;

export interface CallOutConfig {
  name?: string;
  environment?: string;
  variable?: string;
  to?: string;
  toType?: string;
  machineDetection?: string;
  ringTimeout?: number | string;
  testData?: unknown;
}

/** A call out as recorded in the Environment's queue: plain JSON, read back after a restart. */
interface CallRequest {
  id: string;
  nodeId: string;
  to: string;
  machineDetection: string;
  ringTimeout: number;
  /** The Session's first variables (`msg.vars`). */
  vars: Record<string, unknown>;
  /** The input message as JSON (what output 2 and 3 send on later), without req/res. */
  msg: Record<string, unknown>;
}

/** The outcome a Call out's waiting Session gets. */
type CallOutcome = { answered: Record<string, string> } | { callStatus: string; params: Record<string, string> };

/** What `session.binding.callOut` keeps while the call rings. */
interface PendingCall {
  msg: Record<string, unknown>;
  callSid: string;
}

/** TelcoCallOutTask as a start: never chosen for an incoming call, offered by the test chat. */
export const CALL_OUT: StartKind = {
  type: CALL_OUT_TYPE,
  channel: 'TelcoVoice',
  outbound: true,
  testOpening(testData, channel) {
    const text = (key: string, fallback = '') => (typeof testData[key] === 'string' && testData[key] ? String(testData[key]) : fallback);
    const outcome = text('outcome', 'human');
    const person = text('to', SAMPLE_CALLER);
    const ours = text('from', SAMPLE_CALLED);
    const callId = `CA-test-${Date.now().toString(36)}`;
    // The test data's `vars` stand for the input message's `msg.vars`.
    const vars = testVars(testData);
    if (UNANSWERED.has(outcome)) {
      return { text: '', vars, output: NOT_ANSWERED, fields: { call: { status: outcome, callId, to: person, from: ours } }, sender: person, recipient: ours };
    }
    const answeredBy = outcome === 'machine' ? 'machine_end_beep' : 'human';
    const call = outboundCall({ From: ours, To: person, CallSid: callId, AnsweredBy: answeredBy }, channel === 'Chat' ? 'Chat' : 'TelcoVoice');
    return { value: { ...call }, text: '', vars, output: answeredBy === 'human' ? PERSON : MACHINE, sender: person, recipient: ours };
  },
};

/**
 * `{call}` of an answered call out: `from` is the person and `to` our number, as on Text out. In the
 * Test chat (`played`), its channel is the Channel the test plays, as an incoming call's is.
 */
function outboundCall(params: Record<string, string>, played?: 'Chat' | 'TelcoVoice'): CallVariable & { answeredBy: string } {
  const isTest = played !== undefined;
  return {
    from: params.To ?? '',
    to: params.From ?? '',
    callId: params.CallSid ?? '',
    direction: 'outbound-api',
    answeredBy: params.AnsweredBy ?? '',
    callerName: '',
    fromCountry: params.ToCountry ?? '',
    channel: played ?? 'TelcoVoice',
    isTest,
  };
}

function isMachine(answeredBy: string | undefined): boolean {
  return !!answeredBy && (answeredBy.startsWith('machine_') || answeredBy === 'fax');
}

/** Whether the Session is a call out still ringing (it waits at its Call out node for the outcome). */
export function awaitingAnswer(session: SessionRecord | undefined): boolean {
  return session?.state === 'waiting' && session.waitingAt?.nodeType === CALL_OUT_TYPE;
}

/** `telco-call-out`: records the request, which the Environment's queue places in its turn. */
export function callOutNode(voice: VoiceModule, node: RedNode, config: CallOutConfig): void {
  const { red, engine } = voice;
  const variable = (config.variable || 'call').trim().replace(/^\{\s*|\s*\}$/g, '') || 'call';
  setUpStartNode(red, node, { ...config, variable }, CALL_OUT, { environment: config.environment, environmentType: 'telco-voice-environment' });
  if (!config.environment) node.error(runtimeText(red, 'voice', 'runtime.log.callOutNoEnvironment'));
  engine.registerWaitingNode({
    node,
    resume: (session, message, token) => callOutcome(red, engine, node, variable, session, message.data as CallOutcome | undefined, token),
  });
  node.on('input', (msg: any, send: Send, done: Done) => {
    requestCall(voice, node, config, msg)
      .then((queued) => {
        node.status({ fill: 'blue', shape: 'dot', text: runtimeText(red, 'voice', 'runtime.status.queued', { to: queued.to }) });
        done();
      })
      .catch((err: unknown) => {
        const error = err instanceof TaskError ? err : new TaskError(4001, (err as Error).message);
        sendError(red, node, msg, error, send, done);
      });
  });
}

/** Checks the input and records the request in the Environment's queue, before anything is sent. */
async function requestCall(voice: VoiceModule, node: RedNode, config: CallOutConfig, msg: any): Promise<CallRequest> {
  const { red, engine } = voice;
  const env = config.environment ? voice.environments.get(config.environment) : undefined;
  if (!env) throw new TaskError(4008, 'Call out has no voice Environment (select one in the node and deploy)');
  checkEnvironment(env);
  if (msg.vars !== undefined && (typeof msg.vars !== 'object' || msg.vars === null || Array.isArray(msg.vars))) {
    throw new TaskError(3005, "msg.vars must be an object (the new Session's first variables)");
  }
  const vars = (msg.vars ?? {}) as Record<string, unknown>;
  const to = (await readField(red, node, msg, config.to ?? 'to', config.toType ?? 'msg', (text) => resolvePlaceholders(text, vars))).trim();
  if (!to) throw new TaskError(3005, `To is empty: give the person's number in E.164 form (${describeField(config)})`);
  if (!isE164(to)) throw new TaskError(3005, `To "${to}" is not a phone number in E.164 form (+ and up to 15 digits, e.g. +14155550123)`);
  if (to === env.callerId) throw new TaskError(3005, `To "${to}" is the Environment's own Caller ID`);
  const machineDetection = config.machineDetection ?? '';
  if (!MACHINE_DETECTION.has(machineDetection))
    throw new TaskError(3005, `Machine detection "${machineDetection}" is not one of: none, Enable, DetectMessageEnd`);
  const ringTimeout = ringSeconds(config.ringTimeout);
  const busy = await liveCallWith(engine, env, to);
  if (busy) throw busyError(to, busy);
  // The answered call's Session would be refused: the person would be rung, then hung up.
  const full = await engine.limitReached(env.id, node.id);
  if (full) throw new TaskError(4001, full);
  const request: CallRequest = {
    id: randomBytes(12).toString('hex'),
    nodeId: node.id,
    to,
    machineDetection,
    ringTimeout,
    vars: jsonCopy(vars),
    msg: keptMessage(msg),
  };
  // By message and person: a Function node's array or the CSV node's rows keep the input's _msgid
  // on every message, one per person to call, and each of them is a call of its own.
  const dedupe = typeof msg._msgid === 'string' ? { key: `voice-call-out/${env.id}/${node.id}/${msg._msgid}/${to}`, ttlMs: INPUT_KEPT_MS } : undefined;
  const recorded = await engine.enqueue({ environment: env.id, conversation: CALL_OUT_QUEUE, kind: REQUEST_KIND, payload: request, dedupe });
  if (recorded === 'duplicate') throw new TaskError(4030, `This message (${String(msg._msgid)}) already asked for a call to ${to}; it is not placed twice`);
  return request;
}

/** What an Environment must have before a call can be placed from it. */
function checkEnvironment(env: VoiceEnvironment): void {
  const missing = missingCredentials(env);
  if (missing.length) throw new TaskError(4008, `${missing.join(' and ')} not set in voice Environment "${env.name}"`);
  const unusable = restSettingsError(env.credentials.accountSid, env.apiUrl, `voice Environment "${env.name}"`);
  if (unusable) throw unusable;
  if (!env.credentials.token) throw new TaskError(4008, `Token not set in voice Environment "${env.name}": the answered call comes back to its start URL`);
  if (!env.publicBaseUrl) throw new TaskError(4008, `Public base URL not set in voice Environment "${env.name}": the provider must reach the call's webhooks`);
  if (!env.callerId) throw new TaskError(3005, `Caller ID not set in voice Environment "${env.name}": calls are placed from it`);
  if (!isE164(env.callerId)) throw new TaskError(3005, `Caller ID "${env.callerId}" of voice Environment "${env.name}" is not a number in E.164 form`);
}

function describeField(config: CallOutConfig): string {
  const type = config.toType ?? 'msg';
  return type === 'str' ? 'the To field' : `${type}.${config.to ?? 'to'}`;
}

function ringSeconds(value: unknown): number {
  if (value === undefined || value === '' || value === null) return DEFAULT_RING;
  const n = Number(value);
  if (!Number.isInteger(n) || n < RING_MIN || n > RING_MAX)
    throw new TaskError(3005, `Ring timeout "${textOf(value)}" is not a whole number of seconds from ${RING_MIN} to ${RING_MAX}`);
  return n;
}

function busyError(to: string, session: SessionRecord): TaskError {
  return new TaskError(4030, `${to} already has a live call Session ${session.id} on this Environment; no call was placed`);
}

/**
 * The person's live voice Session on this Environment (a call in progress, or one out ringing),
 * from the store's person index: asked for every input message and again at its turn, so it reads
 * the person's Sessions only, however many the Environment has.
 */
async function liveCallWith(engine: Engine, env: VoiceEnvironment, person: string): Promise<SessionRecord | undefined> {
  const store = engine.storeOf(env.id);
  if (!store) return undefined;
  const sessions = await store.liveWith(env.id, person);
  return sessions.find((s) => s.channel === 'TelcoVoice' && s.state !== 'completed' && s.state !== 'ended');
}

/** The input message as plain JSON, without what cannot be kept (an http in's req and res). */
function keptMessage(msg: Record<string, unknown>): Record<string, unknown> {
  const { req: _req, res: _res, session: _session, _msgid, ...rest } = msg;
  const copy = jsonCopy(rest);
  if (JSON.stringify(copy).length <= KEPT_MESSAGE_MAX) return copy;
  return jsonCopy({ payload: rest.payload, topic: rest.topic, vars: rest.vars });
}

/** Plain JSON of a value: a BigInt as text; what cannot be kept (a cycle, a function) left out. */
function jsonCopy(value: unknown): Record<string, unknown> {
  const copied = plain(value ?? {}, []);
  return typeof copied === 'object' && copied !== null && !Array.isArray(copied) ? (copied as Record<string, unknown>) : {};
}

/** `inside` holds the objects above this one: only a value that contains itself is a cycle (a shared one is copied twice). */
function plain(value: unknown, inside: object[]): unknown {
  if (typeof value === 'bigint') return value.toString();
  if (typeof value !== 'object' || value === null) return typeof value === 'function' || typeof value === 'symbol' ? undefined : value;
  if (inside.includes(value) || inside.length > 64) return undefined;
  const json = (value as { toJSON?: () => unknown }).toJSON;
  if (typeof json === 'function') return plain(json.call(value), inside);
  if (Buffer.isBuffer(value)) return value.toJSON();
  const below = [...inside, value];
  if (Array.isArray(value)) return value.map((v) => plain(v, below) ?? null);
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    const copied = plain(v, below);
    if (copied !== undefined) out[k] = copied;
  }
  return out;
}

/** Output 2 with `msg.error`, or, with nothing wired there, the error for Catch nodes. */
function sendError(red: RED, node: RedNode, msg: any, error: TaskError, send: Send, done?: Done): void {
  node.status(errorStatus(red, error, 'dot'));
  msg.error = error.toInfo();
  if (node.wires?.[ERROR]?.length) {
    const outputs: unknown[] = [];
    outputs[ERROR] = msg;
    send(outputs);
    done?.();
    return;
  }
  if (done) done(error);
  else node.error(error, msg);
}

// ---- the queue: placing calls, one at a time per Environment -------------------------------------

/** The readers of the call-out items, and the pace per Environment when the store keeps none. */
export function registerCallOutReaders(voice: VoiceModule): void {
  const { red, engine } = voice;
  const clients = new WeakMap<VoiceEnvironment, twilio.Twilio>();
  const localPace = new WeakMap<VoiceEnvironment, number>();
  const recent = new RecentCalls();
  const clientFor = (env: VoiceEnvironment): twilio.Twilio => {
    let client = clients.get(env);
    if (!client) {
      const timeout = Number(red.settings.channelSessions?.callOutTimeout) > 0 ? Number(red.settings.channelSessions?.callOutTimeout) : DEFAULT_API_TIMEOUT_S;
      client = twilioRestClient(env.credentials.accountSid, env.credentials.authToken, env.apiUrl, timeout * 1000, {
        retryUnsentOnly: true,
        token: env.credentials.token,
      });
      clients.set(env, client);
    }
    return client;
  };
  // The queue places one call at a time (one lease in the cluster), so the pace is the time the
  // last call was sent plus one interval, kept in the store for whichever instance sends the next.
  const paceKey = (env: VoiceEnvironment) => `voice-call-out/${env.id}`;
  const pace = async (store: SessionStore, env: VoiceEnvironment): Promise<void> => {
    const at = store.takeSlot ? await store.takeSlot(paceKey(env), 0, Date.now()) : Math.max(Date.now(), localPace.get(env) ?? 0);
    const wait = at - Date.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  };
  const sent = (store: SessionStore, env: VoiceEnvironment, at: number): Promise<unknown> => {
    const interval = 1000 / env.callsPerSecond;
    if (store.takeSlot) return store.takeSlot(paceKey(env), interval, at);
    localPace.set(env, at + interval);
    return Promise.resolve();
  };

  engine.registerInbound(REQUEST_KIND, async (item) => {
    await placeCall(voice, item, { clientFor, pace, sent, recent });
    return undefined; // the queue item is consumed; the call's Session opens in its own conversation
  });

  engine.registerInbound(PLACED_KIND, async (item, live): Promise<Delivery | undefined> => {
    if (live) return undefined;
    const { request, from } = item.payload as { request: CallRequest; from: string };
    const pending: PendingCall = { msg: request.msg, callSid: item.conversation };
    return {
      channel: 'TelcoVoice',
      message: { text: '', files: [] },
      mayStart: true,
      startAt: request.nodeId,
      binding: { callSid: item.conversation, from: request.to, to: from, callOut: pending },
      person: request.to,
      keepOpeningFiles: false,
      opening: (): Opening => ({ text: '', waits: true, vars: request.vars, sender: request.to, recipient: from }),
    };
  });

  engine.registerInbound(STATUS_KIND, async (item, live): Promise<Delivery | undefined> => {
    const params = (item.payload as { params: Record<string, string> }).params;
    const status = params.CallStatus ?? '';
    if (awaitingAnswer(live)) {
      if (!UNANSWERED.has(status) && status !== 'completed') return undefined;
      return { channel: 'TelcoVoice', message: { text: '', files: [], data: { callStatus: status, params } }, mayStart: false };
    }
    if (live && (UNANSWERED.has(status) || status === 'completed')) {
      // The answered call is over: its Session ends now, not at idle expiry (after this step).
      void engine
        .end(live, `The call ended (CallStatus ${status}); the Session ends with it`)
        .then((ended) => ended.done)
        .catch(() => undefined);
    }
    return undefined;
  });
}

/** What the queue's steps share in one runtime. */
interface Placing {
  clientFor: (env: VoiceEnvironment) => twilio.Twilio;
  /** Waits until the Environment's next call may be sent. */
  pace: (store: SessionStore, env: VoiceEnvironment) => Promise<void>;
  /** A call was sent at `at`: the next one waits one interval from then. */
  sent: (store: SessionStore, env: VoiceEnvironment, at: number) => Promise<unknown>;
  recent: RecentCalls;
}

/**
 * Calls this runtime placed lately, by Environment and person: the CallSid of each person's latest,
 * for the moment between the create's answer and its Session's commit, when the store's person
 * index does not have it yet.
 */
class RecentCalls {
  private readonly calls = new Map<string, string>();

  get(env: string, person: string): string | undefined {
    return this.calls.get(`${env}\u0000${person}`);
  }

  set(env: string, person: string, callSid: string): void {
    const key = `${env}\u0000${person}`;
    this.calls.delete(key);
    this.calls.set(key, callSid);
    if (this.calls.size > RECENT_CALLS_KEPT) this.calls.delete(this.calls.keys().next().value as string);
  }
}

/**
 * One queued request: paced, marked as being placed, checked again (refusalAtTurn), then placed by
 * one POST. A request whose mark is already there was being placed when Node-RED stopped: the
 * provider may have it, so it is never placed again and leaves on the error branch with the word
 * "uncertain".
 */
async function placeCall(voice: VoiceModule, item: InboundItem, { clientFor, pace, sent, recent }: Placing): Promise<void> {
  const { red, engine } = voice;
  const request = item.payload as CallRequest;
  const env = voice.environments.get(item.environment);
  const store = engine.storeOf(item.environment);
  const nodeNow = () => engine.allStarts().find((s) => s.node.id === request.nodeId)?.node;
  if (!env || !store || !nodeNow()) {
    red.log.warn(`[channel-sessions] ${runtimeText(red, 'voice', 'runtime.log.callOutDropped', { to: request.to, node: request.nodeId })}`);
    return;
  }
  const fail = (error: TaskError) => {
    const node = nodeNow();
    if (node) sendError(red, node, { ...request.msg, _msgid: red.util.generateId() }, error, (out) => node.send(out));
    else red.log.warn(`[channel-sessions] ${runtimeText(red, 'voice', 'runtime.log.callOutFailed', { to: request.to, error: error.toString() })}`);
  };
  try {
    checkEnvironment(env);
  } catch (err) {
    fail(err as TaskError);
    return;
  }
  // The client's Calls resource is loaded on first use: before the pace and the time are taken.
  // A client that cannot be built (twilio's own checks) is the Environment's fault and places
  // nothing: output 2, not a throw, which would drop the request with a log line only.
  let calls: twilio.Twilio['calls'];
  try {
    calls = clientFor(env).calls;
  } catch (err) {
    fail(new TaskError(4008, `The Calls API client of voice Environment "${env.name}" could not be set up: ${(err as Error).message}; no call was placed`));
    return;
  }
  // The call is an effect of this step (engine/effects.ts): its CallSid is recorded once Twilio
  // answered, so a step that runs again (a crash before its item was consumed, another instance
  // taking over) goes on with that call instead of saying uncertain. Without a recorded answer, the
  // mark below says whether it was on its way.
  let placed: PlacedCall;
  try {
    placed = await engine.itemEffect<PlacedCall>(item, CALL_EFFECT, () => createCall(voice, item, env, store, calls, { pace, sent, recent }));
  } catch (err) {
    // The step was cut (another instance took it) or the store failed before the POST: the step runs again; no answer for the flow.
    if (err instanceof StepCut || err instanceof StoreUnavailable) throw err;
    fail(err instanceof TaskError ? err : placingError(err, request.to));
    return;
  }
  const callSid = placed.sid;
  const node = nodeNow();
  if (node) node.status({ fill: 'green', shape: 'dot', text: runtimeText(red, 'voice', 'runtime.status.placed', { to: request.to }) });
  // The call's Session opens waiting at the node for the answer, in the call's own conversation,
  // recorded before this request is consumed (a crash in between: this step runs again, gets the
  // recorded call back, and records its item once).
  recent.set(env.id, request.to, callSid);
  // Once per call, also when this step runs again after it was recorded.
  await engine.enqueue({
    environment: env.id,
    conversation: callSid,
    kind: PLACED_KIND,
    payload: { request, from: env.callerId },
    dedupe: { key: `voice-call-placed/${env.id}/${request.id}`, ttlMs: ATTEMPT_KEPT_MS },
  });
}

/** What the step keeps of a call Twilio took (its journaled outcome). */
interface PlacedCall {
  sid: string;
  status?: string;
}

/** The effect's kind in the journal. */
const CALL_EFFECT = 'twilio.call';

/**
 * The pace, the mark, the looks again, and the one POST; throws a TaskError when the call is not
 * placed (or may have been, "uncertain"), which is then not recorded.
 */
async function createCall(
  voice: VoiceModule,
  item: InboundItem,
  env: VoiceEnvironment,
  store: SessionStore,
  calls: twilio.Twilio['calls'],
  { pace, sent, recent }: Pick<Placing, 'pace' | 'sent' | 'recent'>,
): Promise<PlacedCall> {
  const { red, engine } = voice;
  const request = item.payload as CallRequest;
  // The pace is waited for last, so little but the mark and the look below lies between it and the
  // POST. The mark comes first: a step run again after a crash says uncertain, whatever its own call
  // (its Session open by then) would make the look say.
  await pace(store, env);
  if (await store.seen(`voice-call-out-attempt/${env.id}/${request.id}`, ATTEMPT_KEPT_MS)) {
    throw new TaskError(
      4001,
      `uncertain: Node-RED stopped while placing the call to ${request.to}; the provider may have placed it, so it is not placed again`,
    );
  }
  const refused = await refusalAtTurn(engine, env, store, request, recent);
  if (refused) throw refused;
  const root = red.settings.httpNodeRoot;
  // Kept while the request is on its way; the step ends only once it is, so the next one sees it.
  const paced = sent(store, env, Date.now()).catch((err: Error) =>
    red.log.warn(`[channel-sessions] ${runtimeText(red, 'voice', 'runtime.log.paceNotKept', { message: err.message })}`),
  );
  try {
    const call = await calls.create({
      to: request.to,
      from: env.callerId,
      // Both name this request, so a webhook that comes before the step below recorded the call waits for it.
      url: callOutUrl(env, root, startPath(env.credentials.token), item.seq),
      method: 'POST',
      statusCallback: callOutUrl(env, root, statusPath(env.id), item.seq),
      statusCallbackMethod: 'POST',
      statusCallbackEvent: ['initiated', 'ringing', 'answered', 'completed'],
      timeout: request.ringTimeout,
      ...(request.machineDetection ? { machineDetection: request.machineDetection } : {}),
    });
    return { sid: call.sid, ...(call.status ? { status: String(call.status) } : {}) };
  } catch (err) {
    throw placingError(err, request.to);
  } finally {
    await paced;
  }
}

/**
 * Why a request may not be placed now that its turn came, however long it waited: what began since
 * it was checked on arrival. The person's live voice Session, from the store (a call in that began
 * meanwhile, a call placed before a restart or by another instance), or a call this runtime placed
 * for them a moment ago whose Session is not in the store yet (still in its step, or its item still
 * waiting); else the Environment's limit reached.
 */
async function refusalAtTurn(
  engine: Engine,
  env: VoiceEnvironment,
  store: SessionStore,
  request: CallRequest,
  recent: RecentCalls,
): Promise<TaskError | undefined> {
  const live = await liveCallWith(engine, env, request.to);
  if (live) return busyError(request.to, live);
  const latest = recent.get(env.id, request.to);
  const ringing = latest ? await engine.liveSessionFor(env.id, latest) : undefined;
  if (ringing) return busyError(request.to, ringing);
  if (latest && (await store.next({ environment: env.id, conversation: latest }))?.kind === PLACED_KIND) {
    return new TaskError(4030, `${request.to} already has a call ${latest} placed a moment ago on this Environment; no call was placed`);
  }
  const full = await engine.limitReached(env.id, request.nodeId);
  return full ? new TaskError(4001, full) : undefined;
}

/** A failed create as the 4001 a flow author reads: "uncertain" whenever the provider may have placed it. */
function placingError(err: unknown, to: string): TaskError {
  const what = `the call to ${to}`;
  if (err instanceof TwilioTimeout || err instanceof TwilioAnswerCutOff || err instanceof TwilioConnectionLost) {
    return new TaskError(4001, `uncertain: ${err.describe(what)}`);
  }
  if (err instanceof TwilioFault) return new TaskError(4001, err.describe(what));
  const e = err as { message?: string; code?: number; status?: number };
  const code = e.code ? ` (Twilio error ${e.code}${e.status ? `, HTTP ${e.status}` : ''})` : e.status ? ` (HTTP ${e.status})` : '';
  if ((e.status ?? 0) >= 500) {
    return new TaskError(4001, `uncertain: Twilio failed on ${what}${code}: ${e.message ?? String(err)}; it may have placed it, so it is not placed again`);
  }
  return new TaskError(4001, `Twilio rejected ${what}: ${e.message ?? String(err)}${code}`);
}

// ---- the outcome: answered, by whom, or not at all ----------------------------------------------

/** The call's outcome reached the Session waiting at the Call out node. */
async function callOutcome(
  red: RED,
  engine: Engine,
  node: RedNode,
  variable: string,
  session: SessionRecord,
  outcome: CallOutcome | undefined,
  token: TokenMessage,
): Promise<void> {
  const pending = session.binding.callOut as PendingCall | undefined;
  delete session.binding.callOut;
  if (outcome && 'callStatus' in outcome) {
    const { callStatus, params } = outcome;
    if (UNANSWERED.has(callStatus)) {
      const msg: Record<string, unknown> = {
        ...(pending?.msg ?? {}),
        _msgid: token._msgid,
        call: {
          status: callStatus,
          callId: session.binding.callSid,
          to: session.binding.from,
          from: session.binding.to,
          sipResponseCode: params.SipResponseCode ?? '',
        },
      };
      const outputs: unknown[] = [];
      outputs[NOT_ANSWERED] = msg;
      node.status({
        fill: 'yellow',
        shape: 'ring',
        text: runtimeText(red, 'voice', 'runtime.status.notAnswered', { status: callStatus, to: String(session.binding.from) }),
      });
      node.send(outputs);
      await engine.endInStep(session, `The call to ${String(session.binding.from)} was not answered (${callStatus}); no Session`);
      return;
    }
    await engine.endInStep(session, `The call to ${String(session.binding.from)} ended (${callStatus}) before it was answered`);
    return;
  }
  const params = outcome?.answered ?? {};
  const call = outboundCall(params);
  token.vars = token.vars ?? {};
  token.vars[variable] = { ...call };
  session.vars = token.vars;
  const output = isMachine(call.answeredBy) ? MACHINE : PERSON;
  node.status({
    fill: 'green',
    shape: 'dot',
    text: runtimeText(red, 'voice', output === MACHINE ? 'runtime.status.machine' : 'runtime.status.answered', { from: call.from }),
  });
  const outputs: unknown[] = [];
  outputs[output] = token;
  node.send(outputs);
  engine.tokenMoved(session);
}

/** The answered call's first webhook (start URL, Direction outbound-api) for a call out that rings. */
export function answeredDelivery(params: Record<string, string>): Delivery {
  return { channel: 'TelcoVoice', message: { text: '', files: [], data: { answered: params } }, mayStart: false };
}
