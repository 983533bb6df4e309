import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeTestCertificates } from './certificates';
import { freePort } from './node-red';

export interface RedisOptions {
  /** `requirepass`: the default user needs this password. */
  password?: string;
  /** An ACL user with every right (`user NAME on >PASSWORD ~* &* +@all`); the default user is then turned off. */
  aclUser?: { name: string; password: string };
  /** The server binary: `redis-server` (Debian package) unless CS_REDIS_SERVER names another (valkey-server). */
  binary?: string;
  /** TLS only (`rediss://`), with a certificate for 127.0.0.1 from a test CA made with openssl (`caFile`). */
  tls?: boolean;
}

/**
 * A real redis-server on a free loopback port with its own temporary directory: no RDB snapshots,
 * AOF on (as the README recommends). It can be stopped and started again on the same port and
 * directory, so fault tests can take Redis away under a running store and bring it back.
 */
export class RedisServer {
  readonly logs: string[] = [];
  private child: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();

  private constructor(
    readonly port: number,
    readonly dir: string,
    private readonly options: RedisOptions,
  ) {}

  static async start(options: RedisOptions = {}): Promise<RedisServer> {
    const dir = mkdtempSync(join(tmpdir(), 'cs-redis-'));
    // A free port can be taken by another process before the server binds it: then another port.
    for (let attempt = 1; ; attempt++) {
      const server = new RedisServer(await freePort(), dir, options);
      try {
        await server.launch();
        return server;
      } catch (err) {
        if (attempt >= 3 || !server.logs.some((l) => /Address already in use/.test(l))) throw err;
      }
    }
  }

  /** The URL a store is configured with (credentials included when the server wants them). */
  get url(): string {
    const { password, aclUser } = this.options;
    const auth = aclUser ? `${encodeURIComponent(aclUser.name)}:${encodeURIComponent(aclUser.password)}@` : password ? `:${encodeURIComponent(password)}@` : '';
    return `${this.options.tls ? 'rediss' : 'redis'}://${auth}127.0.0.1:${this.port}`;
  }

  /** The test CA that signed the server's certificate (with `tls`). */
  get caFile(): string {
    return join(this.dir, 'ca.pem');
  }

  get running(): boolean {
    return this.child !== undefined;
  }

  /** Stops the server as a crash would (SIGKILL: what the AOF fsync'd is all that survives). */
  async kill(): Promise<void> {
    await this.halt('SIGKILL');
  }

  /** Stops the server cleanly (SIGTERM: AOF flushed). */
  async stop(): Promise<void> {
    await this.halt('SIGTERM');
  }

  /**
   * Freezes the server (SIGSTOP): connections stay open and commands wait unanswered until
   * `resume`, so a test can line up what the store was asked while it could not answer.
   */
  pause(): void {
    this.child?.kill('SIGSTOP');
  }

  /** Lets a paused server go on (SIGCONT): it answers what waited, in the order it came. */
  resume(): void {
    this.child?.kill('SIGCONT');
  }

  /** Starts the server again on the same port and directory (its AOF is read back). */
  async restart(): Promise<void> {
    await this.stop();
    await this.launch();
  }

  async start(): Promise<void> {
    if (!this.child) await this.launch();
  }

  async close(): Promise<void> {
    await this.halt('SIGKILL');
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** One command over a raw RESP connection (no client library: the harness checks the server, not our code). */
  async command(...args: string[]): Promise<string> {
    const auth = this.options.aclUser
      ? ['AUTH', this.options.aclUser.name, this.options.aclUser.password]
      : this.options.password
        ? ['AUTH', this.options.password]
        : undefined;
    const encode = (parts: string[]) => `*${parts.length}\r\n${parts.map((p) => `$${Buffer.byteLength(p)}\r\n${p}\r\n`).join('')}`;
    return new Promise((resolve, reject) => {
      const socket = this.options.tls ? tlsConnect({ port: this.port, host: '127.0.0.1', ca: readFileSync(this.caFile) }) : connect(this.port, '127.0.0.1');
      let data = '';
      const replies = auth ? 2 : 1;
      socket.on('data', (chunk) => {
        data += chunk.toString();
        const lines = data.split('\r\n').filter(Boolean);
        if (lines.length >= replies && !lines[lines.length - 1].startsWith('$')) {
          socket.end();
          resolve(lines.slice(auth ? 1 : 0).join('\n'));
        }
      });
      socket.on('error', reject);
      socket.write((auth ? encode(auth) : '') + encode(args));
    });
  }

  /**
   * Every command the server runs from now on, as MONITOR prints it (`… "EVALSHA" "<sha>" …`), until
   * `stop`: what the store sent, seen by the server rather than by our code. For a server without a
   * password or TLS.
   */
  async monitor(): Promise<{ lines: string[]; stop: () => void }> {
    const lines: string[] = [];
    const socket = connect(this.port, '127.0.0.1');
    let rest = '';
    socket.on('data', (chunk) => {
      const parts = (rest + chunk.toString()).split('\r\n');
      rest = parts.pop() ?? '';
      lines.push(...parts.filter((l) => l !== '+OK'));
    });
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    await new Promise<void>((resolve) => {
      socket.write('*1\r\n$7\r\nMONITOR\r\n');
      socket.once('data', () => resolve());
    });
    return { lines, stop: () => socket.destroy() };
  }

  private async halt(signal: NodeJS.Signals): Promise<void> {
    const child = this.child;
    if (!child) return;
    child.kill(signal);
    await this.exited;
    this.child = undefined;
  }

  private launch(): Promise<void> {
    const { password, aclUser } = this.options;
    const args = [
      '--port',
      String(this.port),
      '--bind',
      '127.0.0.1',
      '--dir',
      this.dir,
      '--save',
      '',
      '--appendonly',
      'yes',
      '--appendfsync',
      'everysec',
      '--daemonize',
      'no',
      '--loglevel',
      'notice',
      '--logfile',
      '',
    ];
    if (this.options.tls) {
      makeTestCertificates(this.dir);
      args.splice(args.indexOf('--port'), 2, '--port', '0', '--tls-port', String(this.port));
      args.push(
        '--tls-cert-file',
        join(this.dir, 'server.pem'),
        '--tls-key-file',
        join(this.dir, 'server.key'),
        '--tls-ca-cert-file',
        this.caFile,
        '--tls-auth-clients',
        'no',
      );
    }
    if (password) args.push('--requirepass', password);
    if (aclUser) args.push('--user', aclUser.name, 'on', `>${aclUser.password}`, '~*', '&*', '+@all', '--user', 'default', 'off');
    const child = spawn(this.options.binary ?? process.env.CS_REDIS_SERVER ?? 'redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    this.exited = new Promise((r) => child.once('exit', () => r()));
    const from = this.logs.length;
    const collect = (chunk: Buffer) => {
      for (const line of chunk.toString().split('\n')) if (line.trim()) this.logs.push(line);
    };
    child.stdout?.on('data', collect);
    child.stderr?.on('data', collect);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`redis-server did not start:\n${this.logs.join('\n')}`)), 15000);
      const poll = setInterval(() => {
        if (this.logs.slice(from).some((l) => /Ready to accept connections/.test(l))) {
          clearTimeout(timer);
          clearInterval(poll);
          resolve();
        }
      }, 20);
      child.once('error', (err) => {
        clearTimeout(timer);
        clearInterval(poll);
        this.child = undefined;
        reject(new Error(`redis-server could not be started (install the Debian package redis-server): ${err.message}`));
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        clearInterval(poll);
        if (this.child === child) this.child = undefined;
        reject(new Error(`redis-server exited (${code}):\n${this.logs.slice(from).join('\n')}`));
      });
    });
  }
}

/** settings.js of every instance, as the README tells users to write it. */
export function redisContextSettings(url: string, extra = ''): string {
  return `module.exports.contextStorage = {
  default: { module: 'memory' },
  shared: { module: require('@channel-sessions/node-red/redis-context'), config: { url: ${JSON.stringify(url)}${extra} } },
};`;
}
