import type { Handler, RED } from '../model/red';
import { moveLastLayer, routerStack, type ExpressApp, type Layer } from './express-stack';
import { normalisedRoot } from './public-url';

const registered = new WeakMap<object, Set<string>>();

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
export function routeOnce(red: RED, method: 'get' | 'post', path: string, handler: Handler): void {
  const top = topLevelApp(red);
  const owner: object = top ?? red.httpNode;
  const seen = registered.get(owner) ?? new Set<string>();
  registered.set(owner, seen);
  const key = `${method} ${path}`;
  if (seen.has(key)) return;
  seen.add(key);
  const guarded: Handler = (req, res, next) => {
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
