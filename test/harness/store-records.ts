import type { SessionRecord } from '../../src/model/session';
import type { SessionStore } from '../../src/stores/session-store';
import { RedisServer } from './redis';

/**
 * A Session record as the engine commits it (format 3, waiting at an InputTask), for tests that
 * talk to a store directly; each test names what matters to it in `fields`.
 */
export function sessionRecord(fields: Partial<SessionRecord> & Pick<SessionRecord, 'id'>): SessionRecord {
  return {
    v: 3,
    channel: 'TelcoMessagingSms',
    environment: 'env1',
    process: 'p1',
    key: fields.id,
    isTest: false,
    vars: {},
    binding: {},
    waitingAt: { nodeId: 'ask', nodeType: 'input-task', since: 1 },
    historyLines: 0,
    logLines: 0,
    created: 1,
    lastActivity: Date.now(),
    state: 'waiting',
    ...fields,
  };
}

/** One step of a conversation as the worker makes it: the lease, the commit of the Session as it now stands, the release. */
export async function commitStep(store: SessionStore, session: SessionRecord, conversation = session.key): Promise<void> {
  const lease = await store.claim({ environment: session.environment, conversation }, 'me', 5000);
  if (!lease) throw new Error(`the conversation ${conversation} is held`);
  await store.commit({ lease, session });
  await store.release(lease);
}

/** The built package's Redis module, as Node-RED loads it. */
const redisContext = require('../../../redis-context.js');

/**
 * A redis-server for the describe block this is called in (started before its tests, closed after),
 * and Session stores on it, each under a key prefix of its own (`<tag><n>:`) so that no store sees
 * another's keys. `nextPrefix` is the prefix the next `open` will use, for a test that writes keys
 * before it opens the store.
 */
export function redisStoresInBlock(
  tag: string,
  log: { warn(m: string): void; error(m: string): void; info?(m: string): void },
): { server: () => RedisServer; open: () => Promise<SessionStore>; nextPrefix: () => string } {
  let redis: RedisServer | undefined;
  let opened = 0;
  before(async function () {
    redis = await RedisServer.start();
  });
  after(async function () {
    await redis?.close();
  });
  const server = (): RedisServer => {
    if (!redis) throw new Error('redis-server not started: redisStoresInBlock runs only inside a describe block');
    return redis;
  };
  return {
    server,
    nextPrefix: () => `${tag}${opened + 1}:`,
    open: async (): Promise<SessionStore> => {
      const store = redisContext.sessionStoreFor({ url: server().url, prefix: `${tag}${++opened}:` }, log);
      await store.whenConnected(5000);
      return store as SessionStore;
    },
  };
}
