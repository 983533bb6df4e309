import { getPath, parseValue, setPath, splitKey } from '../context-path';
import { loadSqlite, type DatabaseSync, type StatementSync } from './sqlite';
import { closeQuietly, explain, openDatabaseFile } from './database-file';
import type { SqliteContextConfig } from './config';
import { coreSay, type Say } from '../../model/texts';

type Callback = (err: Error | null | undefined, ...values: unknown[]) => void;

interface Connection {
  db: DatabaseSync;
  sql: Record<'get' | 'put' | 'drop' | 'keys' | 'dropScope' | 'scopes', StatementSync>;
}

/**
 * A Node-RED context store (the store API of nodered.org/docs/api/context) in the durable
 * default's SQLite file: one row per scope and top-level key, values as JSON. Every `set` is
 * committed before it returns (or calls back), so what a flow wrote survives a crash, unlike
 * localfilesystem's flush interval. SQLite answers at once, so the synchronous forms work too.
 * A nested key (`user.name`) reads the top-level value, changes it and writes it back in one
 * transaction.
 */
export class SqliteContextStore {
  private connection: Connection | undefined;

  constructor(
    private readonly config: SqliteContextConfig,
    private readonly log: { warn(line: string): void; error(line: string): void } = console,
    // Node-RED builds this store from settings.js with no RED at hand: its lines are in English.
    private readonly say: Say = coreSay(),
  ) {}

  /** Node-RED waits for this before it starts the flows: a file that cannot be opened yet must not stop it. */
  async open(): Promise<void> {
    try {
      this.connect();
    } catch (err) {
      this.log.warn(`[channel-sessions] ${this.say('runtime.log.store.contextNotOpened', { message: (err as Error).message })}`);
    }
  }

  async close(): Promise<void> {
    if (this.connection) closeQuietly(this.connection.db);
    this.connection = undefined;
  }

  get(scope: string, key: string | string[], callback?: Callback): unknown {
    return this.answer(callback, Array.isArray(key), () => {
      const keys = Array.isArray(key) ? key : [key];
      return keys.map((k) => {
        const path = splitKey(k);
        return getPath(this.root(scope, path[0]), path.slice(1));
      });
    });
  }

  set(scope: string, key: string | string[], value: unknown, callback?: Callback): void {
    const keys = Array.isArray(key) ? key : [key];
    const values = Array.isArray(key) ? (Array.isArray(value) ? value : [value]) : [value];
    this.answer(callback, false, () => {
      const paths = keys.map(splitKey);
      this.transaction(() => {
        paths.forEach((path, i) => {
          const v = i < values.length ? values[i] : null;
          const root = path.length > 1 ? setPath(this.root(scope, path[0]), path.slice(1), v) : v;
          if (root === undefined) this.sql().drop.run(scope, path[0]);
          else this.sql().put.run(scope, path[0], JSON.stringify(root));
        });
      });
      return [];
    });
  }

  keys(scope: string, callback?: Callback): unknown {
    return this.answer(callback, false, () => {
      const keys = this.sql()
        .keys.all(scope)
        .map((row) => String(row.key));
      // As Node-RED's memory store: the global scope's own function names are not keys.
      return [scope === 'global' ? keys.filter((k) => k !== 'set' && k !== 'get' && k !== 'keys') : keys];
    });
  }

  async delete(scope: string): Promise<void> {
    this.guard(() => this.sql().dropScope.run(scope));
  }

  /**
   * Drops the context of nodes and flows no longer deployed (Node-RED calls it after a deploy).
   * Never fails: Node-RED starts the deployed flows only once every store's clean has resolved, so
   * a file that cannot be written at a deploy would leave every flow stopped. What stays is dropped after a later deploy.
   */
  async clean(activeNodes: string[]): Promise<void> {
    const active = new Set(activeNodes);
    try {
      this.guard(() => {
        const gone = this.sql()
          .scopes.all()
          .map((row) => String(row.scope))
          .filter((scope) => scope !== 'global' && !active.has(scope.split(':')[0]));
        if (gone.length) this.transaction(() => gone.forEach((scope) => this.sql().dropScope.run(scope)));
      });
    } catch (err) {
      this.log.warn(`[channel-sessions] ${this.say('runtime.log.store.contextNotCleaned', { store: 'sqlite-context', message: (err as Error).message })}`);
    }
  }

  /**
   * A top-level value as stored. One that is not JSON (edited by hand) is an error naming it, not
   * a missing value: a nested set would otherwise write over what it held.
   */
  private root(scope: string, key: string): unknown {
    const row = this.sql().get.get(scope, key);
    if (!row) return undefined;
    return parseValue(String(row.value), scope, key);
  }

  /** Runs the work, then answers the way the flow asked: a callback, or a return (several values for several keys). */
  private answer(callback: Callback | undefined, several: boolean, work: () => unknown[]): unknown {
    let values: unknown[];
    try {
      values = this.guard(work);
    } catch (err) {
      if (typeof callback !== 'function') throw err;
      callback(err as Error);
      return undefined;
    }
    if (typeof callback === 'function') {
      callback(null, ...values);
      return undefined;
    }
    return several ? values : values[0];
  }

  /** An SQLite error reaches the flow naming the file; the connection is opened again at the next call. */
  private guard<T>(work: () => T): T {
    try {
      return work();
    } catch (err) {
      if ((err as { code?: unknown }).code === 'INVALID_EXPR') throw err;
      if (this.connection && typeof (err as { errcode?: unknown }).errcode === 'number') {
        closeQuietly(this.connection.db);
        this.connection = undefined;
      }
      throw new Error(`context store sqlite-context (${this.config.path}): ${explain(err, this.config.path)}`, { cause: err });
    }
  }

  private transaction(work: () => void): void {
    const { db } = this.connect();
    db.exec('BEGIN IMMEDIATE');
    try {
      work();
      db.exec('COMMIT');
    } catch (err) {
      try {
        db.exec('ROLLBACK');
      } catch {
        // SQLite rolled back by itself (SQLITE_FULL and the like)
      }
      throw err;
    }
  }

  private sql(): Connection['sql'] {
    return this.connect().sql;
  }

  private connect(): Connection {
    if (this.connection) return this.connection;
    const Database = loadSqlite();
    if (typeof Database === 'string') throw new Error(Database);
    const db = openDatabaseFile(Database, { ...this.config, log: this.log, say: this.say });
    try {
      this.connection = {
        db,
        sql: {
          get: db.prepare('SELECT value FROM context WHERE scope = ? AND key = ?'),
          // An update keeps the row (and so the order keys() lists them in, the order they were first set).
          put: db.prepare('INSERT INTO context (scope, key, value) VALUES (?, ?, ?) ON CONFLICT(scope, key) DO UPDATE SET value = excluded.value'),
          drop: db.prepare('DELETE FROM context WHERE scope = ? AND key = ?'),
          keys: db.prepare('SELECT key FROM context WHERE scope = ? ORDER BY rowid'),
          dropScope: db.prepare('DELETE FROM context WHERE scope = ?'),
          scopes: db.prepare('SELECT DISTINCT scope FROM context'),
        },
      };
    } catch (err) {
      closeQuietly(db);
      throw err;
    }
    return this.connection;
  }
}
