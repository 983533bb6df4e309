import { runtimeText } from '../../model/texts';
import { captureRawBodies, parseForm } from '../../http/raw-body';
import { RefusalLog } from '../../http/refusal-log';
import { routeOnce } from '../../http/routes';
import type { HttpRequest, HttpResponse, RED } from '../../model/red';
import { INTERACT_PATH } from '../environment';
import type { TeamChatModule } from '../teamchat-module';
import { readSignedBody, retryNumOf } from '../signed-request';

/**
 * The interactivity URL (the Slack app's Interactivity Request URL): button clicks and menu
 * selections (`block_actions`), form-encoded with the JSON in a `payload` field and signed like
 * events. Acknowledged with an empty 200 once recorded (Slack shows the person an error when no 200
 * comes within 3 seconds); the click runs after the response.
 */
export function registerInteractRoute(red: RED, teamchat: TeamChatModule): void {
  const refusals = new RefusalLog(red);
  captureRawBodies(red, '/TeamChat/');

  routeOnce(red, 'post', `${INTERACT_PATH}/:token`, async (req: HttpRequest, res: HttpResponse) => {
    const env = await teamchat.environments.find(req.params.token);
    if (!env) {
      res.status(404).type('text/plain').send('Unknown token');
      return;
    }
    void readSignedBody(red, req, res, env, refusals, 'interactivity').then((raw) => {
      if (!raw) return;
      let payload: Record<string, any>;
      try {
        payload = JSON.parse(parseForm(raw).payload ?? '');
        if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) throw new Error('not an object');
      } catch {
        res.status(400).type('text/plain').send('Expected a form field "payload" holding a JSON object');
        return;
      }
      teamchat.inbound.receive(env, payload, { retryNum: retryNumOf(req) }).then(
        () => res.status(200).end(),
        (err: Error) => {
          // Not recorded, so not acknowledged: Slack shows the person that the click failed.
          const line = runtimeText(red, 'teamchat', 'runtime.log.clickStoreRefused', { message: err.message });
          refusals.report(`${env.id}:store`, (said) => env.node.error(said), line);
          res.status(503).end();
        },
      );
    });
  });
}
