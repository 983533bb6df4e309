import { channel } from 'node:diagnostics_channel';
import type { Handler, RED } from '../model/red';
import { moveLastLayer, routerStack, type ExpressApp, type Layer } from './express-stack';
import { normalisedRoot } from './public-url';

const registered = new WeakMap<object, Set<string>>();

/**
 * The diagnostics channel each answered webhook reports on (`{ red, route, status }`: the runtime,
 * the route's pattern, the HTTP status); the runtime's metrics subscribe (engine/metrics.ts).
 */
export const WEBHOOKS_CHANNEL = 'channel-sessions:webhooks';
const webhooks = channel(WEBHOOKS_CHANNEL);

export interface WebhookEvent {
  red: RED;
  route: string;
  status: number;
}

/**
 * Registers a webhook route once per runtime. Routes outlive node redeploys, so handlers look the
 * live Environment up (by token or id) on every request instead of being added per node.
 *
 * Where it can, the route goes on Node-RED's top-level app, ahead of the editor app: every request
 * for the httpNode root otherwise walks the editor's whole middleware stack (sessions, cookies,
 * body parsers) first, which costs more than the webhook itself. Nothing of httpNode is skipped:
 * Node-RED applies `httpNodeMiddleware` and `httpNodeCors` per `http in` node, not to the app, and
 * when `httpNodeAuth` is set the route stays on httpNode behind it.
 */
/** `webhook: false` for a route that is not a provider's webhook (the health route): not counted in the metrics. */
export function routeOnce(red: RED, method: 'get' | 'post', path: string, handler: Handler, options: { webhook?: boolean } = {}): void {
  const top = topLevelApp(red);
  const owner: object = top ?? red.httpNode;
  const seen = registered.get(owner) ?? new Set<string>();
  registered.set(owner, seen);
  const key = `${method} ${path}`;
  if (seen.has(key)) return;
  seen.add(key);
  const guarded: Handler = (req, res, next) => {
    if (options.webhook !== false && webhooks.hasSubscribers) {
      res.once('finish', () => webhooks.publish({ red, route: path, status: res.statusCode } satisfies WebhookEvent));
    }
    try {
      const running = handler(req, res, next) as unknown;
      // An async handler's failure goes where a thrown one does.
      if (running instanceof Promise) running.catch(next);
    } catch (err) {
      next(err);
    }
  };
  const stack = top && routerStack(top);
  if (!top || !stack) {
    red.httpNode[method](path, guarded);
    return;
  }
  const root = normalisedRoot(red.settings.httpNodeRoot);
  top[method](root === '/' ? path : root + path, guarded);
  moveLastLayer(stack, afterExpressSetUp(stack));
}

/** The app httpNode is mounted in, when routes may go there (see routeOnce). */
function topLevelApp(red: RED): ExpressApp | undefined {
  const settings = red.settings;
  if (settings.httpNodeRoot === false || settings.httpNodeAuth || settings.httpAuth) return undefined;
  return (red.httpNode as unknown as ExpressApp).parent;
}

/** Just after Express's own request set-up layers, before anything Node-RED mounted. */
function afterExpressSetUp(stack: Layer[]): number {
  let at = 0;
  stack.forEach((layer, i) => {
    if (layer.name === 'query' || layer.name === 'expressInit') at = i + 1;
  });
  return at;
}
