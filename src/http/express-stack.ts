/**
 * Node-RED's express apps as far as the package reaches into them: the router stack of an app, and
 * the app it is mounted in (Express records `parent` on mount). Express 4 keeps the router in
 * `_router`, Express 5 in `router`.
 */
export interface Layer {
  name: string;
}

export interface ExpressApp {
  _router?: { stack: Layer[] };
  router?: { stack: Layer[] };
  parent?: ExpressApp;
  use(...handlers: unknown[]): void;
  get(path: string, ...handlers: unknown[]): void;
  post(path: string, ...handlers: unknown[]): void;
}

export function routerStack(app: ExpressApp): Layer[] | undefined {
  return app._router?.stack ?? app.router?.stack;
}

/** Moves the layer just added (express always appends) to `index` of the stack. */
export function moveLastLayer(stack: Layer[], index: number): void {
  const layer = stack.pop();
  if (layer) stack.splice(index, 0, layer);
}
