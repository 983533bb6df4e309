import type { RedisStoreConfig } from './config';
import { coreSay } from '../../model/texts';
import { consoleLog, RedisConnection } from './connection';
import { getPath, parseValue, setPath, splitKey } from '../context-path';

type Callback<T extends unknown[]> = (err: Error | null | undefined, ...values: T) => void;

/** How long `open` waits for Redis before Node-RED goes on starting without it. */
const OPEN_WAIT_MS = 5000;

/**
 * A Node-RED context store in Redis (the store API of nodered.org/docs/api/context): one hash per
 * scope (`<prefix>c:<scope>`), one field per top-level key, values as JSON. Every instance that
 * names the same URL and prefix sees the same context. Asynchronous only: a flow uses
 * `get(key, store, callback)`. A nested key (`user.name`) reads the top-level value, changes it
 * and writes it back: like every Node-RED context store it is not an atomic update.
 */
export class RedisContextStore {
  private connection: RedisConnection | undefined;

  constructor(private readonly config: RedisStoreConfig) {}

  async open(): Promise<void> {
    this.connection ??= new RedisConnection(this.config, consoleLog, 'context');
    await this.connection.open(OPEN_WAIT_MS);
  }

  async close(): Promise<void> {
    const connection = this.connection;
    this.connection = undefined;
    await connection?.close();
  }

  get(scope: string, key: string | string[], callback?: Callback<unknown[]>): void {
    if (typeof callback !== 'function') throw syncRefused();
    const keys = Array.isArray(key) ? key : [key];
    this.run(
      async () => {
        const paths = keys.map(splitKey);
        const fields = [...new Set(paths.map((p) => p[0]))];
        const raw = await this.client().hmGet(this.scopeKey(scope), fields);
        const roots = new Map(fields.map((f, i) => [f, parse(raw[i], scope, f)]));
        return paths.map((p) => getPath(roots.get(p[0]), p.slice(1)));
      },
      (err, values) => (err ? callback(err) : callback(null, ...(values ?? []))),
    );
  }

  set(scope: string, key: string | string[], value: unknown, callback?: Callback<[]>): void {
    if (typeof callback !== 'function') throw syncRefused();
    const keys = Array.isArray(key) ? key : [key];
    const values = Array.isArray(key) ? (Array.isArray(value) ? value : [value]) : [value];
    this.run(
      async () => {
        const paths = keys.map(splitKey);
        const nested = [...new Set(paths.filter((p) => p.length > 1).map((p) => p[0]))];
        const current = nested.length ? await this.client().hmGet(this.scopeKey(scope), nested) : [];
        const roots = new Map<string, unknown>(nested.map((f, i) => [f, parse(current[i], scope, f)]));
        paths.forEach((p, i) => {
          const v = i < values.length ? values[i] : null;
          roots.set(p[0], setPath(roots.get(p[0]), p.slice(1), v));
        });
        const multi = this.client().multi();
        for (const [field, v] of roots) {
          if (v === undefined) multi.hDel(this.scopeKey(scope), field);
          else multi.hSet(this.scopeKey(scope), field, JSON.stringify(v));
        }
        multi.sAdd(this.scopesKey(), scope);
        await multi.exec();
      },
      (err) => callback(err ?? null),
    );
  }

  keys(scope: string, callback?: Callback<[string[]]>): void {
    if (typeof callback !== 'function') throw syncRefused();
    this.run(
      () => this.client().hKeys(this.scopeKey(scope)),
      (err, keys) => (err ? callback(err, []) : callback(null, keys ?? [])),
    );
  }

  async delete(scope: string): Promise<void> {
    await this.client().multi().del(this.scopeKey(scope)).sRem(this.scopesKey(), scope).exec();
  }

  /**
   * Drops the context of nodes and flows no longer deployed (Node-RED calls it after a deploy).
   * Never fails: Node-RED starts the deployed flows only once every store's clean has resolved, so
   * a Redis away at a deploy would leave every flow stopped. What stays is dropped after a later deploy.
   */
  async clean(activeNodes: string[]): Promise<void> {
    const active = new Set(activeNodes);
    try {
      const scopes = await this.client().sMembers(this.scopesKey());
      const gone = scopes.filter((scope) => scope !== 'global' && !active.has(scope.split(':')[0]));
      if (!gone.length) return;
      const multi = this.client().multi();
      for (const scope of gone) multi.del(this.scopeKey(scope)).sRem(this.scopesKey(), scope);
      await multi.exec();
    } catch (err) {
      const message = this.connection?.describe(err) ?? (err as Error).message;
      consoleLog.warn(`[channel-sessions] ${coreSay()('runtime.log.store.contextNotCleaned', { store: 'redis-context', message })}`);
    }
  }

  private client() {
    if (!this.connection) throw new Error('the redis-context store is not open');
    return this.connection.client;
  }

  private scopeKey(scope: string): string {
    return `${this.config.prefix}c:${scope}`;
  }

  private scopesKey(): string {
    return `${this.config.prefix}c-scopes`;
  }

  /** Runs the work and calls back once; a Redis error reaches the flow as an error without credentials. */
  private run<T>(work: () => Promise<T>, done: (err: Error | undefined, value?: T) => void): void {
    let result: Promise<T>;
    try {
      result = work();
    } catch (err) {
      done(err as Error);
      return;
    }
    result.then(
      (value) => done(undefined, value),
      (err: Error) => done(new Error(`context store in ${this.connection?.where ?? 'Redis'}: ${this.connection?.describe(err) ?? err.message}`)),
    );
  }
}

/** A field as stored; one that is not JSON (edited by hand) is an error naming it, so a nested set does not write over it. */
function parse(raw: string | null | undefined, scope: string, field: string): unknown {
  if (raw === null || raw === undefined) return undefined;
  return parseValue(raw, scope, field);
}

function syncRefused(): Error {
  return new Error('the redis-context store is asynchronous: use get(key, store, callback) / set(key, value, store, callback)');
}
