import type { Handler, HttpApp, RED } from '../red';

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
  const lane = topLevelLane(red);
  const owner: object = lane?.app ?? red.httpNode;
  const seen = registered.get(owner) ?? new Set<string>();
  registered.set(owner, seen);
  const key = `${method} ${path}`;
  if (seen.has(key)) return;
  seen.add(key);
  const guarded: Handler = (req, res, next) => {
    try {
      handler(req, res, next);
    } catch (err) {
      next(err);
    }
  };
  if (!lane) {
    red.httpNode[method](path, guarded);
    return;
  }
  lane.app[method](lane.root === '/' ? path : lane.root + path, guarded);
  const stack = lane.stack();
  const layer = stack.pop() as Layer;
  stack.splice(lane.insertAt(), 0, layer);
}

interface Layer {
  name: string;
}

interface ExpressApp extends HttpApp {
  _router?: { stack: Layer[] };
  router?: { stack: Layer[] };
  parent?: ExpressApp;
}

interface Lane {
  app: ExpressApp;
  root: string;
  stack(): Layer[];
  /** Just after Express's own request set-up layers, before anything Node-RED mounted. */
  insertAt(): number;
}

/** The app httpNode is mounted in, when routes may go there (see routeOnce). */
function topLevelLane(red: RED): Lane | undefined {
  const settings = red.settings;
  if (settings.httpNodeRoot === false || settings.httpNodeAuth || settings.httpAuth) return undefined;
  const app = (red.httpNode as ExpressApp).parent;
  if (!app || !(app._router ?? app.router)) return undefined;
  const stack = () => (app._router ?? app.router)!.stack;
  return {
    app,
    root: normalisedRoot(settings.httpNodeRoot),
    stack,
    insertAt: () => {
      const layers = stack();
      let at = 0;
      layers.forEach((layer, i) => {
        if (layer.name === 'query' || layer.name === 'expressInit') at = i + 1;
      });
      return at;
    },
  };
}

function normalisedRoot(root: unknown): string {
  if (typeof root !== 'string' || !root || root === '/') return '/';
  return '/' + root.replace(/^\/+|\/+$/g, '');
}
