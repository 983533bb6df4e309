import type { Engine } from '../engine/engine';
import { BodyTooLarge, captureRawBodies, readRawBody } from '../engine/http/raw-body';
import { RefusalLog } from '../engine/http/refusal-log';
import { routeOnce } from '../engine/http/routes';
import { RecentKeys } from '../engine/recent-keys';
import type { HttpRequest, HttpResponse, RED } from '../engine/red';
import { OncePerMessage } from './dedupe';
import { EVENT_PATH, environments, type TeamChatEnvironment } from './environment';
import { deliverMessage } from './inbound';
import { readMessageEvent } from './message-event';
import { isSignedBySlack } from './signature';

/** Slack retries for about 5 minutes; an hour covers every retry of an event. */
const SEEN_FOR_MS = 60 * 60 * 1000;

/**
 * The event URL Slack calls for every subscribed event. Verified with the signing secret over the
 * raw body (401, nothing started), it answers `url_verification`, acknowledges every event at once
 * and handles it after the response, so Slack never times out and retries.
 */
export function registerEventRoute(red: RED, engine: Engine): void {
  const events = new RecentKeys(SEEN_FOR_MS);
  const messages = new OncePerMessage(SEEN_FOR_MS);
  const refusals = new RefusalLog();
  captureRawBodies(red, '/TeamChat/');

  routeOnce(red, 'post', `${EVENT_PATH}/:token`, (req: HttpRequest, res: HttpResponse) => {
    const env = environments.byToken(req.params.token);
    if (!env) {
      res.status(404).type('text/plain').send('Unknown token');
      return;
    }
    readRawBody(req)
      .then((raw) => {
        const signature = req.headers['x-slack-signature'];
        const timestamp = req.headers['x-slack-request-timestamp'];
        if (typeof signature !== 'string' || typeof timestamp !== 'string' || !isSignedBySlack(raw, signature, timestamp, env.signingSecret)) {
          refusals.report(env.id, (line) => env.node.warn(line),
            'Event URL: a request with a missing, wrong or stale Slack signature was refused (401); check the Signing Secret');
          res.status(401).end();
          return;
        }
        let body: Record<string, any>;
        try {
          body = JSON.parse(raw.toString('utf8'));
          if (typeof body !== 'object' || body === null) throw new Error('not an object');
        } catch {
          res.status(400).type('text/plain').send('Malformed JSON');
          return;
        }
        if (body.type === 'url_verification') {
          res.status(200).json({ challenge: String(body.challenge ?? '') });
          return;
        }
        res.status(200).end();
        takeEvent(engine, env, body, req.headers['x-slack-retry-num'], events, messages);
      })
      .catch((err: Error) => {
        if (!res.headersSent) res.status(err instanceof BodyTooLarge ? 413 : 400).end();
      });
  });
}

/** After the acknowledgement: drops events already taken (Slack's retries), then handles the rest. */
function takeEvent(
  engine: Engine, env: TeamChatEnvironment, body: Record<string, any>, retry: string | string[] | undefined,
  events: RecentKeys, messages: OncePerMessage,
): void {
  if (body.type !== 'event_callback' || typeof body.event !== 'object' || body.event === null) return;
  const eventId = typeof body.event_id === 'string' ? `${env.id}/${body.event_id}` : undefined;
  if (eventId) {
    if (events.seen(eventId)) {
      env.node.debug(`event ${body.event_id} already handled${retry ? ` (retry ${retry})` : ''}; ignored`);
      return;
    }
  }
  setImmediate(() => {
    handleEvent(engine, env, body, messages).catch((err: Error) => env.node.error(`Event ${body.event_id ?? ''} failed: ${err.message}`));
  });
}

async function handleEvent(engine: Engine, env: TeamChatEnvironment, body: Record<string, any>, messages: OncePerMessage): Promise<void> {
  const app = await env.identity();
  const message = readMessageEvent(body.event, String(body.team_id ?? ''), app);
  if ('ignored' in message) {
    env.node.debug(`event ${body.event_id ?? ''} ignored: ${message.ignored}`);
    return;
  }
  // A mention in a channel arrives as app_mention and as message: same channel and ts, handled once.
  await messages.run(`${env.id}/${message.channel}/${message.ts}`, () => deliverMessage(engine, env, message, app));
}
