import type { Engine } from '../engine/engine';
import { BodyTooLarge, captureRawBodies, readRawBody } from '../engine/http/raw-body';
import { RefusalLog } from '../engine/http/refusal-log';
import { routeOnce } from '../engine/http/routes';
import type { HttpRequest, HttpResponse, RED } from '../engine/red';
import { EVENT_PATH, environments, type TeamChatEnvironment } from './environment';
import { MESSAGE_KIND, messageReader, recordMessage } from './inbound';
import type { AppIdentity } from './slack-api';
import { readMessageEvent } from './message-event';
import { isSignedBySlack } from './signature';

/**
 * The event URL Slack calls for every subscribed event. Verified with the signing secret over the
 * raw body (401, nothing started), it answers `url_verification`, acknowledges every event at once
 * and handles it after the response, so Slack never times out and retries.
 */
export function registerEventRoute(red: RED, engine: Engine): void {
  const refusals = new RefusalLog();
  engine.registerInbound(MESSAGE_KIND, messageReader(engine));
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
        return takeEvent(engine, env, body).then(
          () => res.status(200).end(),
          (err: Error) => {
            // Not recorded, so not acknowledged: Slack retries the event.
            refusals.report(`${env.id}:store`, (line) => env.node.error(line), `Event refused (503): ${err.message}`);
            res.status(503).end();
          },
        );
      })
      .catch((err: Error) => {
        if (!res.headersSent) res.status(err instanceof BodyTooLarge ? 413 : 400).end();
      });
  });
}

/**
 * Before the acknowledgement: a person's message is recorded for its conversation (once, however
 * often Slack delivers it); everything else (bots, edits, joins, other events) needs nothing.
 */
async function takeEvent(engine: Engine, env: TeamChatEnvironment, body: Record<string, any>): Promise<void> {
  if (body.type !== 'event_callback' || typeof body.event !== 'object' || body.event === null) return;
  const app = await env.identity().catch((err: Error) => {
    env.node.warn(`auth.test failed (${err.message}); the event is read without the app's identity`);
    return { botUserId: undefined } as Partial<AppIdentity>;
  });
  const message = readMessageEvent(body.event, String(body.team_id ?? ''), app as AppIdentity);
  if ('ignored' in message) {
    env.node.debug(`event ${body.event_id ?? ''} ignored: ${message.ignored}`);
    return;
  }
  await recordMessage(engine, env, message, app.botUserId);
}
