import { createClient } from '@redis/client';
import { coreSay, type Say } from '../../model/texts';
import { describeUrl, redact, type RedisStoreConfig } from './config';

export type RedisClient = ReturnType<typeof createClient>;

export interface Log {
  info(line: string): void;
  warn(line: string): void;
  error(line: string): void;
}

/** Before settings.js's store reaches the engine, lines go to the console the way Node-RED prints them. */
export const consoleLog: Log = {
  info: (line) => console.log(framed('info', line)),
  warn: (line) => console.warn(framed('warn', line)),
  error: (line) => console.error(framed('error', line)),
};

/** The time and level Node-RED's own log puts around a line (the line itself is already said). */
function framed(level: string, line: string): string {
  return `${stamp()} - [${level}] ${line}`;
}

function stamp(): string {
  const d = new Date();
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getDate()} ${d.toLocaleString('en', { month: 'short' })} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** How long one command may take before the store reports Redis unavailable (a webhook must still answer in time). */
export const COMMAND_TIMEOUT_MS = 5000;
/** The longest pause between two reconnection attempts. */
const MAX_RETRY_MS = 1000;

/**
 * One connection per Redis URL and prefix in this process, shared by the context store and the
 * Session store that settings.js names, counted so the last user closes it. It reconnects by
 * itself for ever; while it is down, commands fail at once (no offline queue), so a webhook answers
 * 503 instead of waiting.
 */
export class RedisConnection {
  readonly client: RedisClient;
  readonly where: string;
  private users = 0;
  private down = false;
  private readonly listeners = new Set<(available: boolean) => void>();
  private firstConnect: Promise<void> | undefined;
  // Until a Session store hands over the runtime's words, English: the context store Node-RED
  // builds from settings.js has no RED.
  private say: Say = coreSay();

  private constructor(
    readonly config: RedisStoreConfig,
    private log: Log,
  ) {
    this.where = `Redis at ${describeUrl(config.url)}`;
    this.client = createClient({
      url: config.url,
      disableOfflineQueue: true,
      commandOptions: { timeout: COMMAND_TIMEOUT_MS },
      socket: {
        connectTimeout: COMMAND_TIMEOUT_MS,
        // Never give up (the default stops after a socket timeout): Redis may be away for minutes.
        reconnectStrategy: (retries: number) => Math.min(50 * 2 ** Math.min(retries, 5), MAX_RETRY_MS) + Math.floor(Math.random() * 100),
      },
    });
    // Without a listener an 'error' event would crash Node-RED.
    this.client.on('error', (err: Error) => this.lost(err));
    this.client.on('ready', () => this.ready());
  }

  get available(): boolean {
    return this.client.isReady;
  }

  /** Lines go to Node-RED's log, in its language, once the engine hands them over. */
  useLog(log: Log, say: Say): void {
    this.log = log;
    this.say = say;
  }

  onAvailability(listener: (available: boolean) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Starts connecting (once); the client then keeps trying by itself. */
  start(): Promise<void> {
    this.firstConnect ??= this.client.connect().then(
      () => undefined,
      (err: Error) => this.lost(err),
    );
    return this.firstConnect;
  }

  /** Waits up to `waitMs` for the first connection; Redis being away does not stop Node-RED starting. */
  async open(waitMs: number): Promise<void> {
    void this.start();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.start(), new Promise<void>((r) => (timer = setTimeout(r, waitMs)))]);
    clearTimeout(timer);
    if (!this.client.isReady) this.lost(new Error('not reachable yet'));
  }

  /** An error message fit for a log line (no credentials). */
  describe(err: unknown): string {
    return redact(err instanceof Error ? err.message || err.name : String(err), this.config.url);
  }

  private lost(err: Error): void {
    if (this.down) return;
    this.down = true;
    this.log.error(`[channel-sessions] ${this.say('runtime.log.store.redisDown', { where: this.where, message: this.describe(err) })}`);
    for (const listener of this.listeners) listener(false);
  }

  private ready(): void {
    if (this.down) this.log.info(`[channel-sessions] ${this.say('runtime.log.store.redisBack', { where: this.where })}`);
    this.down = false;
    for (const listener of this.listeners) listener(true);
  }

  private static readonly open = new Map<string, RedisConnection>();

  /** The shared connection for this URL and prefix; `release` it when done. */
  static acquire(config: RedisStoreConfig, log: Log): RedisConnection {
    const key = `${config.url}\u0000${config.prefix}`;
    let connection = RedisConnection.open.get(key);
    if (!connection) {
      connection = new RedisConnection(config, log);
      RedisConnection.open.set(key, connection);
    }
    connection.users++;
    return connection;
  }

  async release(): Promise<void> {
    if (--this.users > 0) return;
    RedisConnection.open.delete(`${this.config.url}\u0000${this.config.prefix}`);
    this.listeners.clear();
    try {
      if (this.client.isOpen) await this.client.close();
    } catch {
      // closing a connection that is already gone
    }
    if (this.client.isOpen) this.client.destroy();
  }
}
