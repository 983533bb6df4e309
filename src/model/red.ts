/**
 * The narrow part of Node-RED's node API the package uses. @types/node-red describes Node-RED 1.3
 * and lacks hooks, plugins and the 3-argument input handler, so the boundary is typed here.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

export type Send = (msg: unknown) => void;
export type Done = (err?: Error) => void;

export interface RedNode {
  id: string;
  type: string;
  z?: string;
  name?: string;
  wires: string[][];
  credentials?: Record<string, string | undefined>;
  on(event: 'input', handler: (msg: any, send: Send, done: Done) => void): void;
  on(event: 'close', handler: (removed: boolean, done: () => void) => void): void;
  send(msg: unknown): void;
  status(status: { fill?: string; shape?: string; text?: string } | Record<string, never>): void;
  log(message: string): void;
  warn(message: string): void;
  error(message: string | Error, msg?: unknown): void;
  debug(message: string): void;
  context(): ContextLike;
}

/** The part of a Node-RED context the package uses (the memory store mirrors its Sessions there) (async form, works with every context store). */
export interface ContextLike {
  get(key: string, store: string | undefined, cb: (err: Error | null, value: unknown) => void): void;
  set(key: string, value: unknown, store: string | undefined, cb: (err: Error | null) => void): void;
  keys(store: string | undefined, cb: (err: Error | null, keys: string[]) => void): void;
}

export interface HttpRequest extends IncomingMessage {
  params: Record<string, string>;
  query: Record<string, string | string[] | undefined>;
  body?: unknown;
  protocol?: string;
  originalUrl?: string;
  get(header: string): string | undefined;
}

export interface HttpResponse extends ServerResponse {
  status(code: number): HttpResponse;
  json(body: unknown): HttpResponse;
  send(body?: unknown): HttpResponse;
  type(contentType: string): HttpResponse;
  set(header: string, value: string): HttpResponse;
  sendStatus(code: number): HttpResponse;
}

/** A route handler; an async one handles its own errors (express 4 does not await it). */
export type Handler = (req: HttpRequest, res: HttpResponse, next: (err?: unknown) => void) => void | Promise<void>;

export interface HttpApp {
  get(path: string, ...handlers: Handler[]): void;
  post(path: string, ...handlers: Handler[]): void;
  delete(path: string, ...handlers: Handler[]): void;
}

export interface HookEvent {
  msg: any;
  destination?: { id: string };
  node?: { id: string };
  /** preRoute: whether the router would clone the message before delivering it. */
  cloneMessage?: boolean;
}

export interface RED {
  nodes: {
    createNode(node: object, config: object): void;
    registerType(type: string, ctor: (this: any, config: any) => void, options?: object): void;
    getNode(id: string): any;
    eachNode(cb: (node: { id: string; type: string; z?: string; label?: string; name?: string; [k: string]: unknown }) => void): void;
  };
  hooks: {
    add(name: string, fn: (event: HookEvent) => unknown): void;
    remove(name: string): void;
  };
  events: {
    on(event: string, fn: (...args: any[]) => void): void;
    removeListener(event: string, fn: (...args: any[]) => void): void;
  };
  httpNode: HttpApp;
  httpAdmin: HttpApp;
  /** Node-RED's own HTTP server (WebSocket upgrades are taken from it); absent in some test rigs. */
  server?: import('node:http').Server;
  auth: { needsPermission(permission: string): Handler };
  comms: { publish(topic: string, data: unknown, retain: boolean): void };
  settings: Record<string, any>;
  util: {
    generateId(): string;
    cloneMessage<T>(msg: T): T;
    evaluateNodeProperty(value: string, type: string, node: RedNode, msg: unknown, callback: (err: Error | null, result?: unknown) => void): void;
  };
  log: { info(m: string): void; warn(m: string): void; error(m: string): void; debug(m: string): void };
  plugins?: { registerPlugin(id: string, def: object): void };
  _(key: string, substitutions?: Record<string, unknown>): string;
}

/**
 * What identifies one Node-RED runtime. Node-RED hands each node set its own RED object, so the
 * object itself is not it: the runtime's event bus is, which every node set's RED shares.
 */
export function runtimeKey(red: RED): object {
  return red.events;
}
