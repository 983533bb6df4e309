import type { DeliveryOutcome, Engine } from '../../engine/engine';
import { runtimeText } from '../../model/texts';
import { RefusalLog } from '../../http/refusal-log';
import { StoreUnavailable } from '../../stores/session-store';
import { captureRawBodies } from '../../http/raw-body';
import { routeOnce } from '../../http/routes';
import type { HttpRequest, HttpResponse } from '../../model/red';
import type { InboundMessage } from '../../engine/starts';
import type { CallRound } from '../call-rounds';
import { callFromWebhook } from '../call-variable';
import type { VoiceEnvironment } from '../environment';
import { responseTimeoutMs } from '../settings';
import { untilHandled, type OutboxStore } from '../shared-rounds';
import type { VoiceModule } from '../voice-module';
import { CALL_OUT_MARKER, NEXT_ROUTE, NO_RECORDING_MARKER, PENDING_MARKER, START_ROUTE, STATUS_ROUTE, pendingUrl, withRelayOrigin } from '../urls';
import { placingRequest, untilPlacingEnded } from '../answer-before-placed';
import { AGENT_TYPE } from '../agent/relay-route';
import { calledUrl } from '../../http/public-url';
import { isLive } from '../../model/session';
import { STATUS_KIND, answeredDelivery, awaitingAnswer, registerCallOutReaders } from '../call-out';
import { renderTwiml, type Verb } from '../verbs';
import { readVoiceWebhook, sendTwiml, type VoiceWebhook } from './webhook-request';

/** Call states after which there is no caller left to talk to. */
const CALL_OVER: ReadonlySet<string> = new Set(['completed', 'busy', 'no-answer', 'failed', 'canceled']);

/**
 * The voice webhooks. Each answers in the same HTTP round trip with the TwiML the flow produced
 * until its Session waits or ends; a slow flow gets a holding Redirect instead of a dropped call.
 */
export function registerVoiceRoutes(voice: VoiceModule): void {
  const { red, engine } = voice;
  captureRawBodies(red, '/api/TelcoModule/Voice/');
  registerReaders(voice);
  registerCallOutReaders(voice);
  const refusals = new RefusalLog(red);
  const handle = (handler: (req: HttpRequest, res: HttpResponse) => Promise<void>) => (req: HttpRequest, res: HttpResponse) => {
    handler(req, res).catch((err: Error) => {
      if (err instanceof StoreUnavailable) {
        // Not recorded: the provider plays its fallback URL (when set) and shows error 11200.
        const line = `[channel-sessions] ${runtimeText(red, 'voice', 'runtime.log.webhookStoreRefused', { message: err.message })}`;
        refusals.report('store', (said) => red.log.error(said), line);
        if (!res.headersSent) res.status(503).type('text/plain').send('Session store unavailable');
        return;
      }
      red.log.error(`[channel-sessions] ${runtimeText(red, 'voice', 'runtime.log.webhookFailed', { message: err.message })}`);
      if (!res.headersSent) sendTwiml(res, renderTwiml([{ verb: 'hangup' }]));
    });
  };
  routeOnce(
    red,
    'post',
    START_ROUTE,
    handle(async (req, res) => {
      const hook = await readVoiceWebhook(voice, req, res, await voice.environments.find(req.params.token));
      if (!hook) return;
      const placing = placingRequest(req.query[CALL_OUT_MARKER]);
      if (placing) await untilPlacingEnded(engine, hook.env.id, placing);
      sendTwiml(res, relayOrigin(req, hook, await callStarted(voice, hook, placing)));
    }),
  );
  routeOnce(
    red,
    'post',
    NEXT_ROUTE,
    handle(async (req, res) => {
      const hook = await readVoiceWebhook(voice, req, res, await voice.environments.findById(req.params.environmentId));
      if (!hook) return;
      if (req.query[PENDING_MARKER] !== undefined) sendTwiml(res, relayOrigin(req, hook, await stillRunning(voice, hook)));
      else if (isHangUp(hook.params)) sendTwiml(res, await (isRelayReport(hook.params) ? relayAndCallOver(voice, hook) : callOver(voice, hook)));
      else {
        const noRecording = req.query[NO_RECORDING_MARKER] !== undefined;
        sendTwiml(res, relayOrigin(req, hook, await voice.retried.answer(idempotencyToken(req, hook), () => callContinued(voice, hook, noRecording))));
      }
    }),
  );
  routeOnce(
    red,
    'post',
    STATUS_ROUTE,
    handle(async (req, res) => {
      const hook = await readVoiceWebhook(voice, req, res, await voice.environments.findById(req.params.environmentId));
      if (!hook) return;
      const placing = placingRequest(req.query[CALL_OUT_MARKER]);
      if (placing) await untilPlacingEnded(engine, hook.env.id, placing);
      sendTwiml(res, await callStatus(engine, hook));
    }),
  );

  /** A relay URL without a public base URL is a path: made absolute with the origin the provider called. */
  function relayOrigin(req: HttpRequest, hook: VoiceWebhook, twiml: string): string {
    return withRelayOrigin(twiml, calledUrl(req, hook.env.publicBaseUrl, red.settings.httpNodeRoot));
  }
}

/** Each status of one call counts once, whichever copy of a retried callback came first. */
const CALL_STATUS_KEPT_MS = 24 * 60 * 60 * 1000;

/**
 * The status of a call a Call out node placed: recorded (once per call and status) before the
 * provider gets its 200; its step gives a ringing call's outcome to the node, or ends the Session
 * of an answered call that is over.
 */
async function callStatus(engine: Engine, { env, params, callSid }: VoiceWebhook): Promise<string> {
  await engine.accept({
    environment: env.id,
    conversation: callSid,
    kind: STATUS_KIND,
    payload: { params },
    dedupe: { key: `voice-status/${env.id}/${callSid}/${params.CallStatus ?? ''}`, ttlMs: CALL_STATUS_KEPT_MS },
  });
  return renderTwiml([]);
}

const START_KIND = 'voice-start';
const INPUT_KIND = 'voice-input';
/** A start the provider sends twice (a retry) must not open two Sessions: an hour covers its retries. */
const CALL_START_KEPT_MS = 60 * 60 * 1000;
/** Likewise a relay's end on a call that is over: recorded once, whichever copy came first. */
const RELAY_OVER_KEPT_MS = 60 * 60 * 1000;

/**
 * Call started: a new Session at the Process's call start, `{call}` written; or the answer a call
 * out's Session waits for. `callOut`: the Call out request whose URL the provider called.
 */
async function callStarted(voice: VoiceModule, { env, params, callSid }: VoiceWebhook, callOut: number | undefined): Promise<string> {
  const round = voice.rounds.of(env.id, callSid);
  // The provider retried a start it already had an answer in progress for: no second Session. A
  // call out that rings has a Session already: this start is its answer.
  const live = await voice.engine.liveSessionFor(env.id, callSid);
  if (round.pending || (live && !awaitingAnswer(live))) return stillRunning(voice, { env, params, callSid });
  const accepted = await voice.engine.accept({
    environment: env.id,
    conversation: callSid,
    kind: START_KIND,
    // An absent callOut is left out of the recorded JSON.
    payload: { params, callOut } satisfies CallStart,
    dedupe: { key: `voice-start/${env.id}/${callSid}`, ttlMs: CALL_START_KEPT_MS },
  });
  if (accepted === 'duplicate') return stillRunning(voice, { env, params, callSid });
  return answer(voice, env, callSid, round, accepted.settled);
}

/**
 * Speech, digits or a finished recording: the waiting Task of the call's Session gets it.
 * `noRecording`: the Redirect after a Record, which the provider reaches only for an empty recording.
 */
async function callContinued(voice: VoiceModule, { env, params, callSid }: VoiceWebhook, noRecording: boolean): Promise<string> {
  const round = voice.rounds.of(env.id, callSid);
  // An absent noRecording is left out of the recorded JSON.
  const payload: CallInput = { params, ...(noRecording ? { noRecording } : {}) };
  const accepted = await voice.engine.accept({ environment: env.id, conversation: callSid, kind: INPUT_KIND, payload });
  if (accepted === 'duplicate') return stillRunning(voice, { env, params, callSid });
  return answer(voice, env, callSid, round, accepted.settled);
}

/** A recorded call start: the webhook's fields, and the Call out request whose URL it came to. */
interface CallStart {
  params: Record<string, string>;
  callOut?: number;
}

/** A recorded answer of the caller: the webhook's fields, and whether it is the Redirect after an empty recording. */
interface CallInput {
  params: Record<string, string>;
  noRecording?: boolean;
}

/** The recorded webhooks of a call, read back inside its step (also after a restart). */
function registerReaders({ engine, red }: VoiceModule): void {
  engine.registerInbound(START_KIND, async (item, live) => {
    const { params, callOut } = item.payload as CallStart;
    // A call out that rings: this is its answer. Any other call starts at the Call start, also one
    // placed elsewhere through the REST API with this URL (Direction outbound-api).
    if (awaitingAnswer(live)) return answeredDelivery(params);
    if (callOut) {
      // Placed by a Call out that has no Session waiting for it: the flow was told "uncertain" on
      // output 2, or the Session ended. Starting it at the Call start would greet the person as a
      // caller and run the flow twice for one request: it is hung up, and the flow author told.
      return {
        channel: 'TelcoVoice',
        message: { text: '', files: [] },
        mayStart: false,
        notStarted: runtimeText(red, 'voice', 'runtime.log.callOutNotWaiting'),
      };
    }
    const callSid = item.conversation;
    return {
      channel: 'TelcoVoice',
      message: { text: '', files: [] },
      mayStart: true,
      binding: { callSid, from: params.From ?? '', to: params.To ?? '' },
      person: params.From ?? '',
      keepOpeningFiles: false,
      opening: () => ({ value: { ...callFromWebhook(params) }, text: '', sender: params.From ?? '', recipient: params.To ?? '' }),
    };
  });
  engine.registerInbound(INPUT_KIND, async (item, live) => {
    const { params, noRecording } = item.payload as CallInput;
    // The action URL of an AI agent's relay: how the relay ended, for the Task waiting there.
    const message = live?.waitingAt?.nodeType === AGENT_TYPE ? relayEnded(params) : noRecording ? nothingRecorded(params) : callerInput(params);
    return { channel: 'TelcoVoice', message, mayStart: false };
  });
}

/** The redirect of a slow round: not an answer from the caller; wait for the flow, say the rest. */
async function stillRunning(voice: VoiceModule, { env, callSid }: VoiceWebhook): Promise<string> {
  const shared = voice.shared.storeFor(env.id);
  if (shared) {
    // The step may run on any instance: wait until its item is consumed, then say what it left in the store.
    const ref = { environment: env.id, conversation: callSid };
    const done = await untilHandled(shared, ref, Date.now() + responseTimeoutMs(voice.red));
    const verbs = (await shared.takeOutput(ref)) as Verb[];
    if (!done) return renderTwiml([...verbs, { verb: 'pause', length: 1 }, { verb: 'redirect', url: pendingUrl(env, voice.red.settings.httpNodeRoot) }]);
    if (verbs.length) return renderTwiml(verbs);
    return renderTwiml((await voice.engine.liveSessionFor(env.id, callSid)) ? [] : [{ verb: 'hangup' }]);
  }
  const round = voice.rounds.find(env.id, callSid);
  if (!round) return renderTwiml((await voice.engine.liveSessionFor(env.id, callSid)) ? [] : [{ verb: 'hangup' }]);
  return answer(voice, env, callSid, round, round.pending ?? Promise.resolve());
}

/** A status callback saying the call is over: the Session waiting for it ends now, not at idle expiry. */
async function callOver(voice: VoiceModule, { env, params, callSid }: VoiceWebhook): Promise<string> {
  const session = await voice.engine.liveSessionFor(env.id, callSid);
  if (session) await (await voice.engine.end(session, `The call ended (CallStatus ${params.CallStatus}); the Session ends with it`)).done;
  voice.rounds.forget(env.id, callSid);
  return renderTwiml([]);
}

/**
 * The `<Connect action>` post of a relay the caller hung up on: the AI agent Task waiting there
 * gets how the relay ended first (output 1, its flow running to its next wait, as the help
 * promises), then the Session ends, as the call is over. Both are items of the call's
 * conversation, recorded in that order, so the end always comes after that step. The provider's
 * retry of the post is recorded once (a call is over once), and its end finds the Session gone.
 */
async function relayAndCallOver(voice: VoiceModule, hook: VoiceWebhook): Promise<string> {
  const { env, params, callSid } = hook;
  const session = await voice.engine.liveSessionFor(env.id, callSid);
  if (session?.waitingAt?.nodeType === AGENT_TYPE) {
    await voice.engine.accept({
      environment: env.id,
      conversation: callSid,
      kind: INPUT_KIND,
      payload: { params } satisfies CallInput,
      dedupe: { key: `voice-relay-over/${env.id}/${callSid}`, ttlMs: RELAY_OVER_KEPT_MS },
    });
  }
  // Nobody hears what the flow says after output 1: the end of the Session forgets those verbs.
  return callOver(voice, hook);
}

/** Scoped to the Environment and call, so a token can only ever replay that call's own answer. */
function idempotencyToken(req: HttpRequest, { env, callSid }: VoiceWebhook): string | undefined {
  const header = req.headers['i-twilio-idempotency-token'];
  const token = Array.isArray(header) ? header[0] : header;
  return token ? `${env.id}\u0000${callSid}\u0000${token}` : undefined;
}

/** A `<Connect action>` post of a ConversationRelay: it carries the relay's own fields. */
function isRelayReport(params: Record<string, string>): boolean {
  return params.SessionId !== undefined || params.SessionStatus !== undefined;
}

function isHangUp(params: Record<string, string>): boolean {
  return CALL_OVER.has(params.CallStatus ?? '') && !params.RecordingUrl && !params.SpeechResult && !params.Digits;
}

/** The provider's report on a ConversationRelay that ended (the `<Connect action>` post). */
export function relayEnded(params: Record<string, string>): InboundMessage {
  const relay = {
    handoffData: params.HandoffData ?? '',
    status: params.SessionStatus ?? '',
    duration: params.SessionDuration ?? '',
    errorCode: params.ErrorCode ?? '',
    errorMessage: params.ErrorMessage ?? '',
    sessionId: params.SessionId ?? '',
    callStatus: params.CallStatus ?? '',
  };
  return { text: relay.handoffData, files: [], data: { relay } };
}

/** What the caller gave: a recording, speech, digits; neither speech nor digits is 4009. */
export function callerInput(params: Record<string, string>): InboundMessage {
  const data: Record<string, unknown> = {
    speech: params.SpeechResult ?? '',
    digits: params.Digits ?? '',
    confidence: params.Confidence ?? '',
    recordingUrl: params.RecordingUrl ?? '',
    recordingSid: params.RecordingSid ?? '',
    recordingDuration: params.RecordingDuration ?? '',
  };
  if (params.RecordingUrl) return { text: params.RecordingUrl, files: [], data };
  const text = params.SpeechResult || params.Digits || '';
  if (text) return { text, files: [], data };
  // The Gather ended in silence: an InputTask with "no reply after" takes its output 3, any other 4009.
  return { text: '', files: [], data, noReply: true, error: { code: 4009, message: 'The caller neither spoke nor pressed a key' } };
}

/** The caller left an empty recording (said nothing): the Record Task's error branch, 4009. */
function nothingRecorded(params: Record<string, string>): InboundMessage {
  // Not a Gather's silence (noReply): a Record Task has no "no reply after" of its own.
  return { ...callerInput(params), noReply: undefined, error: { code: 4009, message: 'The recording ended without audio' } };
}

/**
 * Answers what the round collected once the Session waits or ends, or, at the deadline, what it
 * has so far plus a short Pause and a Redirect that comes back for the rest.
 */
/** The warning for a call hung up because no Session took its round: the refusal, or that none is live. */
function hungUp(voice: VoiceModule, callSid: string, refusal: string | undefined): string {
  const reason = refusal ?? runtimeText(voice.red, 'voice', 'runtime.log.noLiveSession');
  return runtimeText(voice.red, 'voice', 'runtime.log.hungUp', { callSid, reason });
}

async function answer(voice: VoiceModule, env: VoiceEnvironment, callSid: string, round: CallRound, work: Promise<DeliveryOutcome | void>): Promise<string> {
  const shared = voice.shared.storeFor(env.id);
  if (shared) return answerFromStore(voice, env, callSid, shared, work);
  let outcome: DeliveryOutcome | void = undefined;
  const settled = work.then(
    (o) => {
      outcome = o;
    },
    (err: Error) => {
      env.node.error(runtimeText(voice.red, 'voice', 'runtime.log.callFailed', { callSid, message: err.message }));
    },
  );
  round.pending = settled;
  let timer: NodeJS.Timeout | undefined;
  const inTime = await Promise.race([
    settled.then(() => true),
    new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), responseTimeoutMs(voice.red));
    }),
  ]);
  if (timer) clearTimeout(timer);
  const verbs: Verb[] = round.drain();
  if (!inTime) {
    void settled.then(async () => {
      if (!(await voice.engine.liveSessionFor(env.id, callSid))) voice.rounds.forgetLater(env.id, callSid);
    });
    return renderTwiml([...verbs, { verb: 'pause', length: 1 }, { verb: 'redirect', url: pendingUrl(env, voice.red.settings.httpNodeRoot) }]);
  }
  round.pending = undefined;
  const result = outcome as DeliveryOutcome | undefined;
  if (!(await stillLive(voice, env, callSid, result))) voice.rounds.forget(env.id, callSid);
  if (!verbs.length && (result?.kind === 'refused' || result?.kind === 'ignored')) {
    env.node.warn(hungUp(voice, callSid, result.kind === 'refused' ? result.reason : undefined));
    return renderTwiml([{ verb: 'hangup' }]);
  }
  return renderTwiml(verbs);
}

/**
 * Whether the call's Session is still live after its step: the step's own Session says so when the
 * step started or continued it (it is then waiting, or over); otherwise the store is asked.
 */
async function stillLive(voice: VoiceModule, env: VoiceEnvironment, callSid: string, result: DeliveryOutcome | undefined): Promise<boolean> {
  if (result && 'session' in result && result.kind !== 'existing') return isLive(result.session);
  return (await voice.engine.liveSessionFor(env.id, callSid)) !== undefined;
}

/**
 * `answer` when several instances share the store: the step may have run here or elsewhere; its
 * verbs are in the store once its item is consumed (the commit waits for them), and at the deadline
 * the verbs so far are said, with a Redirect that any instance can answer.
 */
async function answerFromStore(
  voice: VoiceModule,
  env: VoiceEnvironment,
  callSid: string,
  store: OutboxStore,
  work: Promise<DeliveryOutcome | void>,
): Promise<string> {
  let outcome: DeliveryOutcome | void = undefined;
  const settled = work.then(
    (o) => {
      outcome = o;
    },
    (err: Error) => {
      env.node.error(runtimeText(voice.red, 'voice', 'runtime.log.callFailed', { callSid, message: err.message }));
    },
  );
  let timer: NodeJS.Timeout | undefined;
  const inTime = await Promise.race([
    settled.then(() => true),
    new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), responseTimeoutMs(voice.red));
    }),
  ]);
  if (timer) clearTimeout(timer);
  const ref = { environment: env.id, conversation: callSid };
  const verbs = (await store.takeOutput(ref)) as Verb[];
  if (!inTime) return renderTwiml([...verbs, { verb: 'pause', length: 1 }, { verb: 'redirect', url: pendingUrl(env, voice.red.settings.httpNodeRoot) }]);
  const live = await voice.engine.liveSessionFor(env.id, callSid);
  if (!live) voice.rounds.forget(env.id, callSid);
  const result = outcome as DeliveryOutcome | undefined;
  if (!verbs.length && !live) {
    env.node.warn(hungUp(voice, callSid, result?.kind === 'refused' ? result.reason : undefined));
    return renderTwiml([{ verb: 'hangup' }]);
  }
  return renderTwiml(verbs);
}
