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

/** Who uses a connection, which says what its going away means. */
export type RedisUser = 'sessions' | 'context';

/** Each store says its own going away and coming back: a webhook answers 503, a flow's context call gets an error. */
const LINES: Record<RedisUser, { down: string; back: string }> = {
  sessions: { down: 'redisDown', back: 'redisBack' },
  context: { down: 'redisContextDown', back: 'redisContextBack' },
};

/**
 * The connection of one store: the Session store of a runtime, or the context store Node-RED
 * builds from settings.js. Each has its own, so a runtime's lines go to its own log and nothing is
 * kept per process. It reconnects by itself for ever; while it is down, commands fail at once (no
 * offline queue), so a webhook answers 503 instead of waiting.
 */
export class RedisConnection {
  readonly client: RedisClient;
  readonly where: string;
  private down = false;
  private readonly listeners = new Set<(available: boolean) => void>();
  private firstConnect: Promise<void> | undefined;

  /** `say` is the runtime's words; the context store, which Node-RED builds without a runtime, speaks English. */
  constructor(
    readonly config: RedisStoreConfig,
    private readonly log: Log,
    private readonly user: RedisUser,
    private readonly say: Say = coreSay(),
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
    const said = { where: this.where, message: this.describe(err) };
    this.log.error(`[channel-sessions] ${this.say(`runtime.log.store.${LINES[this.user].down}`, said)}`);
    for (const listener of this.listeners) listener(false);
  }

  private ready(): void {
    if (this.down) this.log.info(`[channel-sessions] ${this.say(`runtime.log.store.${LINES[this.user].back}`, { where: this.where })}`);
    this.down = false;
    for (const listener of this.listeners) listener(true);
  }

  async close(): Promise<void> {
    this.listeners.clear();
    try {
      if (this.client.isOpen) await this.client.close();
    } catch {
      // closing a connection that is already gone
    }
    if (this.client.isOpen) this.client.destroy();
  }
}
