import { runtimeText } from '../../model/texts';
import { captureRawBodies } from '../../http/raw-body';
import { RefusalLog } from '../../http/refusal-log';
import { routeOnce } from '../../http/routes';
import type { HttpRequest, HttpResponse, RED } from '../../model/red';
import { EVENT_PATH } from '../environment';
import type { TeamChatModule } from '../teamchat-module';
import { readSignedBody, retryNumOf } from '../signed-request';

/**
 * The event URL Slack calls for every subscribed event. Verified with the signing secret over the
 * raw body (401, nothing started), it answers `url_verification`, and acknowledges an event once
 * the module has recorded it (the Session runs after the response, so Slack never times out); an
 * event that could not be recorded is answered 503, and Slack retries it.
 */
export function registerEventRoute(red: RED, teamchat: TeamChatModule): void {
  const refusals = new RefusalLog(red);
  captureRawBodies(red, '/TeamChat/');

  routeOnce(red, 'post', `${EVENT_PATH}/:token`, async (req: HttpRequest, res: HttpResponse) => {
    const env = await teamchat.environments.find(req.params.token);
    if (!env) {
      res.status(404).type('text/plain').send('Unknown token');
      return;
    }
    void readSignedBody(red, req, res, env, refusals, 'event').then((raw) => {
      if (!raw) return;
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
      teamchat.inbound.receive(env, body, { retryNum: retryNumOf(req) }).then(
        () => res.status(200).end(),
        (err: Error) => {
          // Not recorded, so not acknowledged: Slack retries the event.
          const line = runtimeText(red, 'teamchat', 'runtime.log.eventStoreRefused', { message: err.message });
          refusals.report(`${env.id}:store`, (said) => env.node.error(said), line);
          res.status(503).end();
        },
      );
    });
  });
}
