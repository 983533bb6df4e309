import type { Engine, InboundReader } from '../../engine/engine';
import { runtimeText } from '../../model/texts';
import { answer } from '../../http/answer';
import { routeOnce } from '../../http/routes';
import type { HttpRequest, HttpResponse, RED } from '../../model/red';
import { pairKey } from '../addresses';
import { STATUS_PATH } from '../environment';
import type { MessagingModule } from '../messaging-module';
import { sentBySession } from '../reach';
import { EMPTY_TWIML, readSignedWebhook } from '../signed-webhook';

const STATUS_KIND = 'messaging-status';
/** The provider posts each status of a message once, and again when it thinks a post was lost; a day covers it. */
const STATUS_KEPT_MS = 24 * 60 * 60 * 1000;
/** Statuses that mean the message will not arrive. */
const FAILED = new Set(['failed', 'undelivered']);
/** Where a failed message resumes the Session: the Tasks that wait for the person's answer to it. */
const ANSWER_WAITS = new Set(['input-task', 'telco-messenger-buttons']);

/** One status callback, as recorded. */
interface MessageStatus {
  messageSid: string;
  status: string;
  errorCode: string;
  to: string;
}

/**
 * `POST /api/TelcoModule/Messaging/status/:token`: the statuses of the messages Sessions sent. A
 * signed status is recorded in its pair's conversation (deduplicated by message and status) before
 * the 200; its step writes it to the Session log, and `failed` / `undelivered` resume the Session
 * waiting for an answer to it on its error branch (4001 with the provider's error code).
 */
export function registerStatusRoute(red: RED, messaging: MessagingModule): void {
  messaging.engine.registerInbound(STATUS_KIND, readStatus(messaging.engine));
  routeOnce(red, 'post', `${STATUS_PATH}:token`, (req, res) => {
    void handleStatus(red, messaging, req, res).catch((err: Error) => {
      red.log.error(`[channel-sessions] ${runtimeText(red, 'messaging', 'runtime.log.statusFailed', { message: err.message })}`);
      if (!res.headersSent) answer(res, 500, 'text/xml', EMPTY_TWIML);
    });
  });
}

async function handleStatus(red: RED, messaging: MessagingModule, req: HttpRequest, res: HttpResponse): Promise<void> {
  const { engine, refusals } = messaging;
  const signed = await readSignedWebhook(red, messaging, req, res, 'status');
  if (!signed) return;
  const { env, params } = signed;
  const messageSid = (params.MessageSid ?? params.SmsSid ?? '').trim();
  const status = (params.MessageStatus ?? params.SmsStatus ?? '').trim();
  const to = (params.To ?? '').trim();
  const from = (params.From ?? '').trim();
  if (!messageSid || !status || !to || !from) {
    env.node.warn(runtimeText(red, 'messaging', 'runtime.log.statusInvalid'));
    answer(res, 400, 'text/xml', EMPTY_TWIML);
    return;
  }
  const payload: MessageStatus = { messageSid, status, errorCode: (params.ErrorCode ?? '').trim(), to };
  try {
    await engine.accept({
      environment: env.id,
      // Our messages go from our number to the person: the pair's conversation, as an inbound message's.
      conversation: pairKey(to, from),
      kind: STATUS_KIND,
      payload,
      dedupe: { key: `messaging-status/${env.id}/${messageSid}/${status}`, ttlMs: STATUS_KEPT_MS },
    });
  } catch (err) {
    const line = runtimeText(red, 'messaging', 'runtime.log.statusStoreRefused', { message: (err as Error).message });
    refusals.report(`${env.id}:store`, (said) => env.node.error(said), line);
    answer(res, 503, 'text/xml', EMPTY_TWIML);
    return;
  }
  answer(res, 200, 'text/xml', EMPTY_TWIML);
}

/** A recorded status, read inside its conversation's step: logged in the Session that sent the message. */
function readStatus(engine: Engine): InboundReader {
  return async (item, live) => {
    const report = item.payload as MessageStatus;
    if (!live || !sentBySession(live, report.messageSid)) return undefined;
    const failed = FAILED.has(report.status);
    const code = report.errorCode ? ` (provider error ${report.errorCode})` : '';
    engine.addLog(live, { level: failed ? 'warn' : 'info', message: `message ${report.messageSid} to ${report.to}: ${report.status}${code}` });
    const waitsAt = live.state === 'waiting' ? live.waitingAt?.nodeType : undefined;
    if (!failed || !waitsAt || !ANSWER_WAITS.has(waitsAt)) return undefined;
    return {
      channel: live.channel,
      message: {
        text: '',
        files: [],
        notSaid: true,
        error: { code: 4001, message: `The message ${report.messageSid} to ${report.to} was ${report.status}${code}` },
      },
      mayStart: false,
    };
  };
}
