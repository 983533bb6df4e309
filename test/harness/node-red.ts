import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';

/** The repository root (tests run from .test-build/test/harness). */
export const REPO_ROOT = resolve(__dirname, '..', '..', '..');

/** Node-RED under test: the devDependency, or the one CI names for the second run (Node-RED 5). */
export const NODE_RED_DIR = process.env.CS_NODE_RED_DIR || dirname(require.resolve('node-red/package.json'));

export interface StartOptions {
  /** Extra settings.js entries (plain JSON values). */
  settings?: Record<string, unknown>;
  /** Reuse a user dir (restart tests). */
  userDir?: string;
  /** Admin user: enables adminAuth with this password for user `admin`. */
  adminPassword?: string;
  /** Extra Node.js flags for the runtime (the benchmark uses --expose-gc). */
  nodeArgs?: string[];
  /** JavaScript appended to settings.js, for what JSON cannot say (a `require` in contextStorage). */
  settingsCode?: string;
  /** The Node.js binary that runs Node-RED (default: the one running the tests). */
  nodeBinary?: string;
  /** Node-RED's own directory (default: NODE_RED_DIR). */
  nodeRedDir?: string;
  /** The package folder linked into the user dir (default: this repository; a test of the packed package passes its unpacked folder). */
  packageDir?: string;
}

export interface HttpResult {
  status: number;
  body: any;
  text: string;
  headers: Headers;
}

/**
 * A real Node-RED runtime started by its own CLI (`red.js`) in a child process, with a fresh user
 * dir whose node_modules links this package, as a palette install would place it.
 */
export class NodeRed {
  readonly logs: string[] = [];
  private child: ChildProcess | undefined;
  private token: string | undefined;
  private exited: Promise<void> = Promise.resolve();
  /** How the runtime ended when nobody stopped it (a crash). */
  private crash: string | undefined;
  /** Set while stop() or kill() ends the runtime: that exit is no crash. */
  private ending = false;

  private constructor(
    readonly userDir: string,
    readonly port: number,
    private readonly options: StartOptions,
  ) {}

  static async start(options: StartOptions = {}): Promise<NodeRed> {
    const userDir = options.userDir ?? mkdtempSync(join(tmpdir(), 'cs-nodered-'));
    // A free port can be taken by another process (an outgoing connection's local port, a test
    // file running beside) before Node-RED listens on it: then it starts again on another.
    for (let attempt = 1; ; attempt++) {
      const red = new NodeRed(userDir, await freePort(), options);
      red.prepareUserDir();
      try {
        await red.launch();
        return red;
      } catch (err) {
        if (attempt >= 3 || !red.logs.some((l) => /Error: port in use/.test(l))) throw err;
      }
    }
  }

  /** The runtime's process id while it runs (the cluster benchmark reads its CPU time). */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  url(path = '/'): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  /** Deploys flows the way the editor does (admin API v2, full deploy), credentials inline. */
  async deploy(flows: object[]): Promise<void> {
    const startedBefore = this.logs.filter((l) => /\] Started flows/.test(l)).length;
    const res = await this.admin('POST', '/flows', { flows }, { 'Node-RED-API-Version': 'v2', 'Node-RED-Deployment-Type': 'full' });
    if (res.status !== 200) throw new Error(`deploy failed: ${res.status} ${res.text}`);
    // The API can answer before the new flows have started; the runtime logs when they have.
    await eventually(() => this.logs.filter((l) => /\] Started flows/.test(l)).length > startedBefore, 20000, 'the flows to start');
  }

  async admin(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<HttpResult> {
    if (this.options.adminPassword && !this.token) await this.login();
    const auth: Record<string, string> = this.token ? { Authorization: `Bearer ${this.token}` } : {};
    return this.send(path, method, body, { ...auth, ...headers });
  }

  /** A raw request to any route (webhooks), no admin token. */
  request(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<HttpResult> {
    return this.send(path, method, body, headers);
  }

  /** A request that, when the runtime has crashed, fails saying so, with its last log lines, rather than only "fetch failed". */
  private async send(path: string, method: string, body: unknown, headers: Record<string, string>): Promise<HttpResult> {
    try {
      return await request(this.url(path), method, body, headers);
    } catch (err) {
      if (!this.crash) throw err;
      const lines = this.logs.slice(-40).join('\n');
      throw new Error(`${method} ${path}: ${(err as Error).message}; Node-RED exited by itself (${this.crash}), its last lines:\n${lines}`, { cause: err });
    }
  }

  async waitForLog(pattern: RegExp, timeoutMs = 5000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const line = this.logs.find((l) => pattern.test(l));
      if (line) return line;
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error(`no log line matched ${pattern}; last lines:\n${this.logs.slice(-30).join('\n')}`);
  }

  /** Stops Node-RED the way a service manager does (SIGTERM, context flushed), or as Ctrl-C does (SIGINT). */
  async stop(signal: 'SIGTERM' | 'SIGINT' = 'SIGTERM'): Promise<void> {
    if (!this.child) return;
    this.ending = true;
    this.child.kill(signal);
    await this.exited;
    this.child = undefined;
    this.token = undefined;
  }

  /** A crash: SIGKILL, nothing flushed, no close handlers run. */
  async kill(): Promise<void> {
    if (!this.child) return;
    this.ending = true;
    this.child.kill('SIGKILL');
    await this.exited;
    this.child = undefined;
    this.token = undefined;
  }

  /** Starts the runtime again on the same user dir and port (after `kill` or `stop`). */
  async relaunch(): Promise<void> {
    await this.launch();
  }

  async restart(): Promise<void> {
    await this.stop();
    await this.launch();
  }

  async close(): Promise<void> {
    await this.stop();
    if (!this.options.userDir) rmSync(this.userDir, { recursive: true, force: true });
  }

  private prepareUserDir(): void {
    const scope = join(this.userDir, 'node_modules', '@channel-sessions');
    mkdirSync(scope, { recursive: true });
    try {
      symlinkSync(this.options.packageDir ?? REPO_ROOT, join(scope, 'node-red'), 'dir');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const settings: Record<string, unknown> = {
      uiHost: '127.0.0.1',
      uiPort: this.port,
      userDir: this.userDir,
      flowFile: 'flows.json',
      credentialSecret: 'test-credential-secret',
      logging: { console: { level: 'info', metrics: false, audit: false } },
      editorTheme: { tours: false, projects: { enabled: false } },
      externalModules: { autoInstall: false, palette: { allowInstall: false } },
      diagnostics: { enabled: false },
      telemetry: { enabled: false },
      ...this.options.settings,
    };
    let text = `module.exports = ${JSON.stringify(settings, null, 2)};\n`;
    if (this.options.adminPassword) {
      const bcrypt = require(require.resolve('bcryptjs', { paths: [NODE_RED_DIR, join(NODE_RED_DIR, 'node_modules/@node-red/editor-api')] }));
      const hash = bcrypt.hashSync(this.options.adminPassword, 4);
      text += `module.exports.adminAuth = { type: 'credentials', users: [{ username: 'admin', password: ${JSON.stringify(hash)}, permissions: '*' }] };\n`;
    }
    if (this.options.settingsCode) text += `${this.options.settingsCode}\n`;
    writeFileSync(join(this.userDir, 'settings.js'), text);
  }

  private launch(): Promise<void> {
    const child = spawn(
      this.options.nodeBinary ?? process.execPath,
      [
        ...(this.options.nodeArgs ?? []),
        join(this.options.nodeRedDir ?? NODE_RED_DIR, 'red.js'),
        '--userDir',
        this.userDir,
        '--settings',
        join(this.userDir, 'settings.js'),
      ],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, NODE_OPTIONS: '' },
      },
    );
    this.child = child;
    this.ending = false;
    this.crash = undefined;
    this.exited = new Promise((r) => child.once('exit', () => r()));
    child.once('exit', (code, signal) => {
      if (!this.ending) this.crash = `code ${code}, signal ${signal}`;
    });
    const collect = (chunk: Buffer) => {
      for (const line of chunk.toString().split('\n')) if (line.trim()) this.logs.push(line);
    };
    child.stdout?.on('data', collect);
    child.stderr?.on('data', collect);
    const from = this.logs.length;
    return new Promise((resolvePromise, reject) => {
      const timer = setTimeout(() => reject(new Error(`Node-RED did not start:\n${this.logs.join('\n')}`)), 30000);
      const poll = setInterval(() => {
        if (this.logs.slice(from).some((l) => /Started flows/.test(l))) {
          clearTimeout(timer);
          clearInterval(poll);
          setTimeout(resolvePromise, 50);
        }
      }, 25);
      child.once('exit', (code) => {
        clearTimeout(timer);
        clearInterval(poll);
        reject(new Error(`Node-RED exited (${code}):\n${this.logs.join('\n')}`));
      });
    });
  }

  private async login(): Promise<void> {
    const res = await request(this.url('/auth/token'), 'POST', {
      client_id: 'node-red-admin',
      grant_type: 'password',
      scope: '*',
      username: 'admin',
      password: this.options.adminPassword,
    });
    if (res.status !== 200) throw new Error(`login failed: ${res.status} ${res.text}`);
    this.token = res.body.access_token;
  }
}

export async function request(url: string, method: string, body?: unknown, headers: Record<string, string> = {}): Promise<HttpResult> {
  const init: RequestInit = { method, headers: { ...headers } };
  if (body !== undefined) {
    if (typeof body === 'string' || body instanceof Uint8Array) {
      init.body = body as string;
    } else {
      init.body = JSON.stringify(body);
      (init.headers as Record<string, string>)['Content-Type'] ??= 'application/json';
    }
  }
  const res = await fetch(url, init);
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON (TwiML, plain text)
  }
  return { status: res.status, body: parsed, text, headers: res.headers };
}

export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolvePort(port));
    });
  });
}

/** Polls until `check` returns a value (not undefined/false), or fails after the timeout. */
export async function eventually<T>(check: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs = 5000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value;
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
}
