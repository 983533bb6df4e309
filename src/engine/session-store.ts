import type { SessionRecord } from './session';

/** The part of a Node-RED context the Session store needs (async form, works with every store). */
export interface ContextLike {
  get(key: string, store: string | undefined, cb: (err: Error | null, value: unknown) => void): void;
  set(key: string, value: unknown, store: string | undefined, cb: (err: Error | null) => void): void;
  keys(store: string | undefined, cb: (err: Error | null, keys: string[]) => void): void;
}

/**
 * Keeps an Environment's Sessions in the Node-RED context store it names (its `sessionStore`), one
 * key per Session, so a persistent store (localfilesystem) carries waiting Sessions over a restart.
 */
export class SessionStore {
  constructor(
    private context: ContextLike,
    private readonly storeName: string | undefined,
  ) {}

  /** A redeployed Environment node hands over its new context object. */
  rebind(context: ContextLike): void {
    this.context = context;
  }

  save(session: SessionRecord): Promise<void> {
    return new Promise((resolve, reject) => {
      this.context.set(storeKey(session.id), session, this.storeName, (err) => (err ? reject(err) : resolve()));
    });
  }

  remove(sessionId: string): Promise<void> {
    return new Promise((resolve, reject) => {
      this.context.set(storeKey(sessionId), undefined, this.storeName, (err) => (err ? reject(err) : resolve()));
    });
  }

  async loadAll(): Promise<SessionRecord[]> {
    const keys = await new Promise<string[]>((resolve, reject) => {
      this.context.keys(this.storeName, (err, found) => (err ? reject(err) : resolve(found ?? [])));
    });
    const sessions: SessionRecord[] = [];
    for (const key of keys.filter((k) => k.startsWith(KEY_PREFIX))) {
      const value = await new Promise<unknown>((resolve, reject) => {
        this.context.get(key, this.storeName, (err, found) => (err ? reject(err) : resolve(found)));
      });
      if (isSessionRecord(value)) sessions.push(value);
    }
    return sessions;
  }
}

const KEY_PREFIX = 'session_';

function storeKey(sessionId: string): string {
  return KEY_PREFIX + sessionId;
}

function isSessionRecord(value: unknown): value is SessionRecord {
  return typeof value === 'object' && value !== null && typeof (value as SessionRecord).id === 'string'
    && typeof (value as SessionRecord).key === 'string' && typeof (value as SessionRecord).state === 'string';
}
