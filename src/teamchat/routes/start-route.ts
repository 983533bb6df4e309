import { randomBytes } from 'node:crypto';
import type { InboundReader } from '../../engine/engine';
import { fileList } from '../../files/file-values';
import { BodyTooLarge, readRawBody } from '../../http/raw-body';
import { routeOnce } from '../../http/routes';
import type { HttpRequest, HttpResponse, RED } from '../../model/red';
import { conversationKey } from '../conversation';
import { START_PATH } from '../environment';
import type { TeamChatModule } from '../teamchat-module';
import { TEAMCHAT_CHANNEL, type TeamChatBinding } from '../inbound';
import { sameText } from '../signature';
import { teamchatOpening } from '../starts';

interface StartRequest {
  channel: string;
  user: string;
  initialMessage: string;
  threadTs: string;
}

/**
 * `POST /TeamChat/start/:token`: an outside system starts a team-chat Session, authorised with
 * `Authorization: Bearer <signing secret>`. A conversation that already has a Session does nothing.
 */
export function registerStartRoute(red: RED, teamchat: TeamChatModule): void {
  const { engine } = teamchat;
  engine.registerInbound(START_KIND, readStart);
  routeOnce(red, 'post', `${START_PATH}/:token`, async (req: HttpRequest, res: HttpResponse) => {
    const env = await teamchat.environments.find(req.params.token);
    if (!env) {
      res.status(404).json({ error: 'Unknown token' });
      return;
    }
    const auth = req.headers.authorization ?? '';
    const given = /^Bearer\s+(.+)$/i.exec(auth)?.[1]?.trim() ?? '';
    if (!env.signingSecret || !given || !sameText(given, env.signingSecret)) {
      res.status(401).json({ error: 'Authorization: Bearer <signing secret> is missing or wrong' });
      return;
    }
    readRawBody(req)
      .then(async (raw) => {
        const parsed = parseStartRequest(raw);
        if (typeof parsed === 'string') {
          res.status(400).json({ error: parsed });
          return;
        }
        // PerThread without a thread: each request is its own conversation.
        const key =
          env.settings.sessionMode === 'PerThread' && !parsed.threadTs
            ? `${parsed.channel}/api-${randomBytes(8).toString('hex')}`
            : conversationKey(env.settings.sessionMode, { channel: parsed.channel, user: parsed.user, threadTs: parsed.threadTs });
        const app = await env.identity();
        let accepted;
        try {
          accepted = await engine.accept({ environment: env.id, conversation: key, kind: START_KIND, payload: { request: parsed, team: app.team ?? '' } });
        } catch (err) {
          res.status(503).json({ error: `the start could not be recorded: ${(err as Error).message}` });
          return;
        }
        if (accepted === 'duplicate') return;
        const outcome = await accepted.opened;
        if (outcome.kind === 'started') res.status(202).json({ sessionId: outcome.session.id });
        else if (outcome.kind === 'existing' || outcome.kind === 'continued') res.status(200).json({ sessionId: outcome.session.id, existing: true });
        else if (outcome.kind === 'refused') res.status(409).json({ error: outcome.reason });
        else res.status(409).json({ error: 'The Session did not start' });
      })
      .catch((err: Error) => {
        if (!res.headersSent) res.status(err instanceof BodyTooLarge ? 413 : 500).json({ error: err.message });
      });
  });
}

const START_KIND = 'teamchat-start';

/** A recorded start request, read back inside its conversation's step. */
const readStart: InboundReader = async (item) => {
  const { request, team } = item.payload as { request: StartRequest; team: string };
  const binding: TeamChatBinding = { channel: request.channel, thread: request.threadTs, user: request.user, team };
  return {
    channel: TEAMCHAT_CHANNEL,
    message: { text: request.initialMessage, files: [] },
    mayStart: true,
    startOnly: true,
    binding: binding as unknown as Record<string, unknown>,
    opening: () =>
      teamchatOpening({
        text: request.initialMessage,
        files: fileList([]),
        from: request.user,
        profileName: '',
        to: request.channel,
        team,
        thread: request.threadTs,
        messageId: '',
        channel: TEAMCHAT_CHANNEL,
        isTest: false,
      }),
  };
};

function parseStartRequest(raw: Buffer): StartRequest | string {
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(raw.toString('utf8'));
  } catch {
    return 'The body must be JSON: {channel, user, initialMessage, threadTs}';
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return 'The body must be a JSON object';
  const text = (name: string): string | undefined => {
    const v = body[name];
    return v === undefined || v === null ? '' : typeof v === 'string' ? v.trim() : undefined;
  };
  const channel = text('channel');
  const user = text('user');
  const initialMessage = text('initialMessage');
  const threadTs = text('threadTs');
  if (!channel) return 'channel (a channel id) is required';
  if (!user) return 'user (a user id) is required';
  if (initialMessage === undefined || threadTs === undefined) return 'initialMessage and threadTs must be strings';
  return { channel, user, initialMessage, threadTs };
}
