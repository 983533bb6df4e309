import type { Delivery, InboundReader } from '../../engine/engine';
import { runtimeText } from '../../model/texts';
import { answer } from '../../http/answer';
import { routeOnce } from '../../http/routes';
import type { HttpRequest, HttpResponse, RED } from '../../model/red';
import { pairKey } from '../addresses';
import { INBOUND_PATH } from '../environment';
import type { MessagingModule } from '../messaging-module';
import { isStatusCallback, readInbound, type InboundSms } from '../inbound-message';
import { incomingMedia } from '../media-download';
import { messageOpening } from '../starts';
import { MESSENGER_WINDOW_MS, windowKey } from '../reach';
import { EMPTY_TWIML, readSignedWebhook } from '../signed-webhook';

/** The provider reads a 200 text/plain body as a reply to send, so every answer is TwiML. */

/** The provider redelivers a message it thinks was lost within minutes; a day covers it. */
const MESSAGE_SID_KEPT_MS = 24 * 60 * 60 * 1000;
const INBOUND_KIND = 'messaging';

/**
 * `POST /api/TelcoModule/Messaging/inbound/:token`: checks the provider's signature, answers empty
 * TwiML once the message is durably recorded (503 when it cannot be), and the engine handles it
 * afterwards; replies go out through the REST API.
 */
export function registerInboundRoute(red: RED, messaging: MessagingModule): void {
  messaging.engine.registerInbound(INBOUND_KIND, readRecorded(red, messaging));
  routeOnce(red, 'post', `${INBOUND_PATH}:token`, (req, res) => {
    void handleInbound(red, messaging, req, res).catch((err: Error) => {
      red.log.error(`[channel-sessions] ${runtimeText(red, 'messaging', 'runtime.log.inboundFailed', { message: err.message })}`);
      if (!res.headersSent) answer(res, 500, 'text/xml', EMPTY_TWIML);
    });
  });
}

async function handleInbound(red: RED, messaging: MessagingModule, req: HttpRequest, res: HttpResponse): Promise<void> {
  const { engine, refusals } = messaging;
  const signed = await readSignedWebhook(red, messaging, req, res, 'inbound');
  if (!signed) return;
  const { env, params } = signed;
  if (isStatusCallback(params)) {
    answer(res, 200, 'text/xml', EMPTY_TWIML);
    return;
  }
  const read = readInbound(params);
  if (!read.ok) {
    // A signed request we cannot use is a configuration fault: a 4xx shows in the provider's
    // debugger (error 11200) instead of being acknowledged and silently dropped.
    env.node.warn(runtimeText(red, 'messaging', 'runtime.log.inboundInvalid', { sid: params.MessageSid ?? '', reason: read.reason }));
    answer(res, 400, 'text/xml', EMPTY_TWIML);
    return;
  }
  const message = read.message;
  let accepted;
  try {
    accepted = await engine.accept({
      environment: env.id,
      conversation: pairKey(message.from, message.to),
      kind: INBOUND_KIND,
      payload: message,
      ...(message.messageSid ? { dedupe: { key: `messaging/${env.id}/${message.messageSid}`, ttlMs: MESSAGE_SID_KEPT_MS } } : {}),
    });
  } catch (err) {
    // Not recorded, so not acknowledged: the provider shows the failure (and uses the fallback URL).
    const line = runtimeText(red, 'messaging', 'runtime.log.inboundStoreRefused', { message: (err as Error).message });
    refusals.report(`${env.id}:store`, (said) => env.node.error(said), line);
    answer(res, 503, 'text/xml', EMPTY_TWIML);
    return;
  }
  answer(res, 200, 'text/xml', EMPTY_TWIML);
  if (accepted === 'duplicate') {
    env.node.debug(`message ${message.messageSid} delivered again; handled once`);
    return;
  }
  void accepted.settled.then((outcome) => {
    if (outcome.kind === 'refused')
      env.node.warn(runtimeText(red, 'messaging', 'runtime.log.inboundNotStarted', { sid: message.messageSid, from: message.from, reason: outcome.reason }));
  });
}

/** A recorded inbound message, read back inside its conversation's step (also after a restart). */
function readRecorded(red: RED, messaging: MessagingModule): InboundReader {
  return async (item, live) => {
    const env = messaging.environments.get(item.environment);
    if (!env) return undefined;
    const message = item.payload as InboundSms;
    // A messenger user who writes opens the 24-hour window for free-form messages: the Session
    // knows it at once, the store (for a later Session of the pair) once the step is committed.
    const messenger = message.channel === 'TelcoMessagingMessenger';
    const marks = messenger ? [{ key: windowKey(env.id, message.from, message.to), ttlMs: MESSENGER_WINDOW_MS }] : undefined;
    if (messenger && live) live.binding.lastInbound = item.at;
    if (!message.text.trim() && !message.media.length) {
      const what = `message ${message.messageSid} from ${message.from}${message.type ? ` (${message.type})` : ''} has neither text nor files`;
      if (live) return { ...emptyAnswer(message, what), marks };
      env.node.warn(runtimeText(red, 'messaging', 'runtime.log.inboundEmpty', { what }));
      return undefined;
    }
    return {
      channel: message.channel,
      message: {
        text: message.text,
        files: incomingMedia(env, message.media),
        data: { messageSid: message.messageSid, ...(message.button ? { button: message.button } : {}) },
        answerFields: { location: message.location },
      },
      mayStart: true,
      marks,
      binding: { user: message.from, ours: message.to, ...(messenger ? { lastInbound: item.at } : {}) },
      opening: (session, kept) => ({
        ...messageOpening(
          session.channel,
          {
            text: message.text,
            from: message.from,
            to: message.to,
            messageId: message.messageSid,
            profileName: message.profileName,
            ...(message.location ? { location: message.location } : {}),
          },
          kept,
          false,
        ),
        // Honoured with the shared Start only; a channel start writes {message}.
        answersFirstInput: { text: message.text, files: kept, answerFields: { location: message.location } },
      }),
    };
  };
}

/** A message the waiting step cannot read: 4009 on its error branch; it never starts a Session. */
function emptyAnswer(message: InboundSms, what: string): Delivery {
  return {
    channel: message.channel,
    message: { text: '', files: [], error: { code: 4009, message: `The ${what}` } },
    mayStart: false,
  };
}
