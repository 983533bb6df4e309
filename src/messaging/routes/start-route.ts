import { timingSafeEqual } from 'node:crypto';
import type { InboundReader } from '../../engine/engine';
import { fileList } from '../../files/file-values';
import { BodyTooLarge, readRawBody } from '../../http/raw-body';
import { routeOnce } from '../../http/routes';
import type { HttpRequest, HttpResponse, RED } from '../../model/red';
import { runtimeText } from '../../model/texts';
import { channelOf, isMessengerAddress, isNumberAddress, pairKey, providerAddress } from '../addresses';
import { START_PATH, type MessagingEnvironment } from '../environment';
import type { MessagingModule } from '../messaging-module';
import { messageOpening } from '../starts';

interface StartRequest {
  to: string;
  from: string;
  text: string;
}

/**
 * `POST /api/TelcoModule/Messaging/start/:token`: an outside system starts a Session toward a
 * user's number (`to`) from one of our numbers (`from`), authorised like the other start routes
 * with `Authorization: Bearer <Auth Token or Webhook Signing Secret>`. A pair that already has a
 * Session is left alone.
 */
export function registerStartRoute(red: RED, messaging: MessagingModule): void {
  const { engine } = messaging;
  engine.registerInbound(START_KIND, readStart);
  routeOnce(red, 'post', `${START_PATH}:token`, (req, res) => {
    void handleStart(messaging, req, res).catch((err: Error) => {
      red.log.error(`[channel-sessions] ${runtimeText(red, 'messaging', 'runtime.log.startFailed', { message: err.message })}`);
      if (!res.headersSent) res.status(500).json({ error: 'the Session could not be started' });
    });
  });
}

async function handleStart(messaging: MessagingModule, req: HttpRequest, res: HttpResponse): Promise<void> {
  const { engine } = messaging;
  const env = await messaging.environments.find(req.params.token);
  if (!env) {
    req.resume();
    res.status(404).json({ error: 'Unknown messaging Environment token' });
    return;
  }
  if (!authorised(env, req.headers.authorization)) {
    req.resume();
    res.status(401).json({ error: 'Authorization: Bearer <Auth Token or Webhook Signing Secret> is required' });
    return;
  }
  let body: StartRequest | string;
  try {
    body = parseStart(JSON.parse((await readRawBody(req, 64 * 1024)).toString('utf8') || '{}'));
  } catch (err) {
    res.status(err instanceof BodyTooLarge ? 413 : 400).json({ error: 'the body must be JSON' });
    return;
  }
  if (typeof body === 'string') {
    res.status(400).json({ error: body });
    return;
  }
  let accepted;
  try {
    accepted = await engine.accept({ environment: env.id, conversation: pairKey(body.to, body.from), kind: START_KIND, payload: body });
  } catch (err) {
    res.status(503).json({ error: `the start could not be recorded: ${(err as Error).message}` });
    return;
  }
  if (accepted === 'duplicate') return;
  // Answered once the Session waits or ends, so its first message has gone out.
  const outcome = await accepted.settled;
  if (outcome.kind === 'existing') res.status(200).json({ sessionId: outcome.session.id, existing: true });
  else if (outcome.kind === 'started') res.status(202).json({ sessionId: outcome.session.id });
  else res.status(409).json({ error: outcome.kind === 'refused' ? outcome.reason : 'the Session did not start' });
}

const START_KIND = 'messaging-start';

/** A recorded start request, read back inside its conversation's step. */
const readStart: InboundReader = async (item) => {
  const request = item.payload as StartRequest;
  return {
    channel: channelOf(request.to),
    message: { text: request.text, files: [] },
    mayStart: true,
    startOnly: true,
    binding: { user: request.to, ours: request.from },
    opening: (session) =>
      messageOpening(
        session.channel,
        {
          text: request.text,
          from: request.to,
          to: request.from,
          messageId: '',
          profileName: '',
        },
        fileList([]),
        false,
      ),
  };
};

/** `to` and `from` are required; both carry the messenger prefix, or neither does. */
function parseStart(parsed: unknown): StartRequest | string {
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return 'the body must be a JSON object';
  const json = parsed as Record<string, unknown>;
  const to = typeof json.to === 'string' ? providerAddress(json.to.trim()) : '';
  const from = typeof json.from === 'string' ? providerAddress(json.from.trim()) : '';
  if (!to || !from) return "to (the user's number) and from (our number) are required";
  // The person's answers and the provider's statuses come with numbers in E.164 form: a Session
  // opened for another spelling of the number would never hear from them.
  const unusable = [to, from].find((address) => !isNumberAddress(address));
  if (unusable) return `"${unusable}" is not a number in E.164 form (+ and up to 15 digits, e.g. +15551234567), after any whatsapp: prefix`;
  if (isMessengerAddress(to) !== isMessengerAddress(from)) return 'to and from must both carry the whatsapp: prefix, or neither';
  if (json.text !== undefined && typeof json.text !== 'string') return 'text must be a string';
  return { to, from, text: typeof json.text === 'string' ? json.text : '' };
}

function authorised(env: MessagingEnvironment, header: string | undefined): boolean {
  const match = /^Bearer\s+(.+)$/i.exec(header ?? '');
  if (!match) return false;
  const given = Buffer.from(match[1].trim());
  return [env.credentials.authToken, env.credentials.webhookSigningSecret]
    .filter((secret): secret is string => !!secret)
    .some((secret) => {
      const expected = Buffer.from(secret);
      return expected.length === given.length && timingSafeEqual(expected, given);
    });
}
