import twilio from 'twilio';
import type { Engine } from '../engine/engine';
import { answer } from '../engine/http/answer';
import { calledUrl } from '../engine/http/public-url';
import { BodyTooLarge, parseForm, readRawBody, signedForm } from '../engine/http/raw-body';
import { RefusalLog } from '../engine/http/refusal-log';
import { routeOnce } from '../engine/http/routes';
import { RecentKeys } from '../engine/recent-keys';
import type { HttpRequest, HttpResponse, RED } from '../engine/red';
import { isSignedByTwilio } from '../telco/twilio-signature';
import { pairKey } from './addresses';
import { displayName, environments, INBOUND_PATH, type MessagingEnvironment } from './environment';
import { isStatusCallback, readInbound, type InboundSms } from './inbound-message';
import { incomingMedia } from './media-download';
import { messageOpening } from './starts';

/** The provider reads a 200 text/plain body as a reply to send, so every answer is TwiML. */
const EMPTY_TWIML = new twilio.twiml.MessagingResponse().toString();

const handled = new Map<string, RecentKeys>();
const refusals = new RefusalLog();

/**
 * `POST /api/TelcoModule/Messaging/inbound/:token`: checks the provider's signature, answers empty
 * TwiML at once and hands the message to the engine afterwards; replies go out through the REST API.
 */
export function registerInboundRoute(red: RED, engine: Engine): void {
  routeOnce(red, 'post', `${INBOUND_PATH}:token`, (req, res) => {
    void handleInbound(red, engine, req, res).catch((err: Error) => {
      red.log.error(`[channel-sessions] messaging inbound: ${err.message}`);
      if (!res.headersSent) answer(res, 500, 'text/xml', EMPTY_TWIML);
    });
  });
}

async function handleInbound(red: RED, engine: Engine, req: HttpRequest, res: HttpResponse): Promise<void> {
  const env = environments.byToken(req.params.token);
  if (!env) {
    req.resume();
    res.status(404).type('text/plain').send('Unknown messaging Environment token');
    return;
  }
  let raw: Buffer;
  try {
    raw = await readRawBody(req);
  } catch (err) {
    answer(res, err instanceof BodyTooLarge ? 413 : 400, 'text/xml', EMPTY_TWIML);
    return;
  }
  if (!signatureValid(red, env, req, signedForm(raw))) {
    res.status(403).type('text/plain').send('Twilio Request Validation Failed.');
    return;
  }
  const params = parseForm(raw);
  if (isStatusCallback(params)) {
    answer(res, 200, 'text/xml', EMPTY_TWIML);
    return;
  }
  const read = readInbound(params);
  if (!read.ok) {
    // A signed request we cannot use is a configuration fault: a 4xx shows in the provider's
    // debugger (error 11200) instead of being acknowledged and silently dropped.
    env.node.warn(`4012 ModuleInvalidData: inbound message ${params.MessageSid ?? ''} ignored: ${read.reason}`);
    answer(res, 400, 'text/xml', EMPTY_TWIML);
    return;
  }
  answer(res, 200, 'text/xml', EMPTY_TWIML);
  accept(engine, env, read.message);
}

/** After the answer: once per MessageSid, and only with text or files. */
function accept(engine: Engine, env: MessagingEnvironment, message: InboundSms): void {
  const key = pairKey(message.from, message.to);
  if (message.messageSid && recent(env).seen(message.messageSid)) {
    env.node.debug(`message ${message.messageSid} delivered again; handled once`);
    return;
  }
  if (!message.text.trim() && !message.media.length) {
    const text = `4009 ModuleInputEmpty: message ${message.messageSid} from ${message.from} has neither text nor files; nothing started`;
    const live = engine.liveSessionFor(env.id, key);
    if (live) engine.addLog(live, { level: 'warn', code: 4009, message: text });
    env.node.warn(text);
    return;
  }
  const files = incomingMedia(env, message.media);
  engine.deliver({
    environment: env.id,
    channel: message.channel,
    key,
    message: { text: message.text, files, data: { messageSid: message.messageSid, ...(message.button ? { button: message.button } : {}) } },
    mayStart: true,
    binding: { user: message.from, ours: message.to },
    opening: (session, kept) => messageOpening(session.channel, {
      text: message.text, from: message.from, to: message.to, messageId: message.messageSid, profileName: message.profileName,
    }, kept, false),
  }).then((outcome) => {
    if (outcome.kind === 'refused') env.node.warn(`message ${message.messageSid} from ${message.from}: ${outcome.reason}`);
  }).catch((err: Error) => env.node.error(`message ${message.messageSid} from ${message.from}: ${err.message}`));
}

function signatureValid(red: RED, env: MessagingEnvironment, req: HttpRequest, params: Record<string, string | string[]>): boolean {
  if (!env.config.validateSignatures) return true;
  const key = env.credentials.webhookSigningSecret || env.credentials.authToken;
  const url = calledUrl(req, env.config.publicBaseUrl, red.settings.httpNodeRoot);
  const header = req.headers['x-twilio-signature'];
  const signature = Array.isArray(header) ? header[0] : header;
  if (!key) {
    refusals.report(`${env.id}:no-key`, (line) => env.node.warn(line),
      `4020 WebhookSignatureInvalid: inbound webhook refused: "${displayName(env)}" has no Auth Token or Webhook Signing Secret to check it (4008)`);
    return false;
  }
  if (signature && isSignedByTwilio(key, signature, url, params)) return true;
  const reason = signature ? 'signature does not match' : 'no X-Twilio-Signature header';
  refusals.report(`${env.id}:${reason}`, (line) => env.node.warn(line),
    `4020 WebhookSignatureInvalid: inbound webhook refused (${reason} for ${url.replace(/\/inbound\/.*/, '/inbound/…')}); nothing was run`);
  return false;
}

/** Each Environment remembers its last 10,000 MessageSids. */
function recent(env: MessagingEnvironment): RecentKeys {
  let ids = handled.get(env.id);
  if (!ids) handled.set(env.id, (ids = new RecentKeys()));
  return ids;
}
