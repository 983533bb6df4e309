import type { Handler, HttpApp } from '../red';

const registered = new WeakMap<HttpApp, Set<string>>();

/**
 * Registers a route once per runtime. Routes outlive node redeploys, so handlers look the live
 * Environment up (by token or id) on every request instead of being added per node.
 */
export function routeOnce(app: HttpApp, method: 'get' | 'post', path: string, handler: Handler): void {
  const seen = registered.get(app) ?? new Set<string>();
  registered.set(app, seen);
  const key = `${method} ${path}`;
  if (seen.has(key)) return;
  seen.add(key);
  app[method](path, (req, res, next) => {
    try {
      handler(req, res, next);
    } catch (err) {
      next(err);
    }
  });
}
