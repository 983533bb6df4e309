/**
 * `require('@channel-sessions/node-red/redis-context')` in settings.js (see docs/ARCHITECTURE.md,
 * "Session stores"): a Node-RED context store module whose function also gives the engine a Session store
 * on the same Redis, URL and prefix (`sessionStoreFor(config, log, say)`, the engine's
 * SessionStoreModule in store/choose-store.ts).
 */
import { readConfig } from './stores/redis/config';
import { coreSay, type Say } from './model/texts';
import { consoleLog, type Log } from './stores/redis/connection';
import { RedisContextStore } from './stores/redis/context-store';
import { RedisStore } from './stores/redis/redis-store';

function redisContext(config: unknown): RedisContextStore {
  return new RedisContextStore(readConfig(config));
}

/**
 * The engine's way in: a contextStorage entry whose `module` has this function keeps Sessions in
 * Redis. Returns at once with a store on a connection of its own (not the context store's: each
 * runtime's store logs to that runtime); its first commands wait briefly for that connection, and
 * while Redis is away the store answers StoreUnavailable.
 */
redisContext.sessionStoreFor = (config: unknown, log?: Log, say?: Say): RedisStore => RedisStore.open(readConfig(config), log ?? consoleLog, say ?? coreSay());

/** What Node-RED prints as "module=…" when it loads the store: never the URL (it may hold a password). */
redisContext.toString = (): string => 'channel-sessions redis-context';

export = redisContext;
