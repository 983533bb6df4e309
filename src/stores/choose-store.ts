import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { ContextLike, RED } from '../model/red';
import { coreSay, type Say } from '../model/texts';
import { MemoryStore } from './memory/memory-store';
import type { SessionStore } from './session-store';
import { loadSqlite } from './sqlite/sqlite';
import { SqliteStore } from './sqlite/sqlite-store';

/** A context store module (settings.js `contextStorage`) that can also carry Sessions itself, like the Redis one. */
export interface SessionStoreModule {
  /** `log` and `say`: where its lines go, in the runtime's language. */
  sessionStoreFor(config: Record<string, unknown>, log: RED['log'], say: Say): SessionStore;
  /** A module whose Sessions go in an SQLite file (sqlite-context): the chooser opens one store per file. */
  sqliteStoreOptions(config: Record<string, unknown>): { path: string; synchronous: 'NORMAL' | 'FULL' };
}

export interface StoreChoice {
  store: SessionStore;
  /** What a crash would lose, for the deploy log; none for a durable store. */
  warning?: string;
}

export interface StoreSettings {
  /** Where the durable default keeps its database; default `<userDir>/channel-sessions.db`. */
  path?: string;
  /** 'FULL' survives a power loss too, at a disk flush per step; default 'NORMAL' (survives a crash of Node-RED). */
  synchronous?: 'NORMAL' | 'FULL';
}

/**
 * Which store keeps an Environment's Sessions: an empty `sessionStore` is the package's durable
 * default (SQLite under the user dir); a name is a settings.js `contextStorage` entry: a module
 * that carries Sessions itself (Redis), or any other context store, whose Sessions are kept in
 * memory and copied to it at every step, with a warning that says what a crash loses.
 */
export class StoreChooser {
  private durableDefault: StoreChoice | undefined;
  private readonly shared = new Map<string, SessionStore>();
  /** One store per SQLite file: two would each take the same recorded messages. */
  private readonly sqliteFiles = new Map<string, SqliteStore>();
  /** The stores' lines in the runtime's language. */
  private readonly say: Say;

  constructor(private readonly red: RED) {
    this.say = coreSay(red);
  }

  choose(name: string | undefined, mirror: { context: ContextLike }): StoreChoice {
    if (!name) return this.defaultStore();
    const entry = (this.red.settings.contextStorage ?? {})[name] as { module?: unknown; config?: Record<string, unknown> } | undefined;
    const module = entry?.module as Partial<SessionStoreModule> | string | undefined;
    if ((module && typeof module === 'object') || typeof module === 'function') {
      const carrier = module;
      if (typeof carrier.sqliteStoreOptions === 'function') {
        const userDir = this.red.settings.userDir ?? process.cwd();
        const config = { ...(entry?.config ?? {}), settings: { userDir, ...(entry?.config?.settings as object | undefined) } };
        const store = this.sqliteFile(carrier.sqliteStoreOptions(config), this.say('runtime.log.store.whoNamed', { name }));
        return typeof store === 'string' ? this.withoutSqlite(store) : { store };
      }
      if (typeof carrier.sessionStoreFor === 'function') {
        const key = `${name}\u0000${JSON.stringify(entry?.config ?? {})}`;
        let store = this.shared.get(key);
        if (!store) this.shared.set(key, (store = carrier.sessionStoreFor(entry?.config ?? {}, this.red.log, this.say)));
        return { store };
      }
    }
    const store = new MemoryStore(`memory, copied to context store "${name}"`, { context: mirror.context, storeName: name, log: this.red.log, say: this.say });
    return { store, warning: lossOf(name, entry, this.say) };
  }

  /** Every store chosen so far (the default and shared ones), to close at shutdown. */
  all(): SessionStore[] {
    return [...new Set([...(this.durableDefault ? [this.durableDefault.store] : []), ...this.sqliteFiles.values(), ...this.shared.values()])];
  }

  /** The Session store of an SQLite file, or why this Node has none. */
  private sqliteFile(options: { path: string; synchronous: 'NORMAL' | 'FULL' }, who: string): SqliteStore | string {
    const Database = loadSqlite();
    if (typeof Database === 'string') return Database;
    const path = resolve(options.path);
    const open = this.sqliteFiles.get(path);
    if (open) {
      if (open.synchronous !== options.synchronous) {
        const said = { who, asked: options.synchronous, path, open: open.synchronous };
        this.red.log.warn(`[channel-sessions] ${this.say('runtime.log.store.synchronousKept', said)}`);
      }
      return open;
    }
    const store = new SqliteStore(Database, { path, synchronous: options.synchronous, log: this.red.log, say: this.say });
    this.sqliteFiles.set(path, store);
    return store;
  }

  private withoutSqlite(reason: string): StoreChoice {
    return {
      store: new MemoryStore('memory (no durable store on this Node.js)'),
      warning: this.say('runtime.log.store.noSqlite', { reason }),
    };
  }

  /** The durable default's store when it has a file, opened if no Environment has used it yet; never made for this. */
  durableStoreIfAny(): SessionStore | undefined {
    if (this.durableDefault) return this.durableDefault.store;
    return existsSync(this.defaultPath()) ? this.defaultStore().store : undefined;
  }

  /**
   * Where the Test chat keeps its Sessions: an SQLite file of its own beside the durable default
   * (so a restart keeps them, and they never count toward an Environment's Sessions or limits),
   * opened now only when `ifExists` finds it there; memory where this Node.js has no SQLite.
   */
  testStore(ifExists = false): SessionStore | undefined {
    const path = this.defaultPath().replace(/(\.db)?$/, '-test.db');
    if (ifExists && !existsSync(path)) return undefined;
    const settings = (this.red.settings.channelSessions?.store ?? {}) as StoreSettings;
    const store = this.sqliteFile({ path, synchronous: settings.synchronous === 'FULL' ? 'FULL' : 'NORMAL' }, this.say('runtime.log.store.whoTestChat'));
    return typeof store === 'string' ? new MemoryStore('the Test chat (memory)') : store;
  }

  private defaultPath(): string {
    const settings = (this.red.settings.channelSessions?.store ?? {}) as StoreSettings;
    return settings.path ?? join(String(this.red.settings.userDir ?? process.cwd()), 'channel-sessions.db');
  }

  private defaultStore(): StoreChoice {
    if (this.durableDefault) return this.durableDefault;
    const settings = (this.red.settings.channelSessions?.store ?? {}) as StoreSettings;
    const path = this.defaultPath();
    const store = this.sqliteFile({ path, synchronous: settings.synchronous === 'FULL' ? 'FULL' : 'NORMAL' }, this.say('runtime.log.store.whoDefault'));
    this.durableDefault = typeof store === 'string' ? this.withoutSqlite(store) : { store };
    return this.durableDefault;
  }
}

function lossOf(name: string, entry: { module?: unknown; config?: Record<string, unknown> } | undefined, say: Say): string {
  if (!entry) return say('runtime.log.store.lossNotInSettings', { name });
  if (entry.module === 'localfilesystem') {
    const flush = entry.config?.cache === false ? 0 : Number(entry.config?.flushInterval ?? 30);
    return flush ? say('runtime.log.store.lossFlushed', { name, flush }) : say('runtime.log.store.lossEveryChange', { name });
  }
  if (entry.module === 'memory' || entry.module === undefined) return say('runtime.log.store.lossMemory', { name });
  return say('runtime.log.store.lossNotAtomic', { name });
}
