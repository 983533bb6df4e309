/**
 * `require('@channel-sessions/node-red/sqlite-context')` in settings.js: a Node-RED context store
 * module in the durable default's SQLite file, for flows that want their own context to survive
 * a crash, and for Environments whose Session store is named (`sessionStore`) rather than left
 * empty: their Sessions then go in that file's Session tables, as with the durable default.
 */
import { readSqliteConfig, type SqliteContextConfig } from './stores/sqlite/config';
import { SqliteContextStore } from './stores/sqlite/context-store';

function sqliteContext(config: unknown): SqliteContextStore {
  return new SqliteContextStore(readSqliteConfig(config));
}

/**
 * The engine's way in (store/choose-store.ts): Sessions go in this file, through the same Session
 * store as the durable default when it is the same file (one per file, so no two take its work).
 */
sqliteContext.sqliteStoreOptions = (config: unknown): SqliteContextConfig => readSqliteConfig(config);

/** What Node-RED prints as "module=…" when it loads the store. */
sqliteContext.toString = (): string => 'channel-sessions sqlite-context';

export = sqliteContext;
