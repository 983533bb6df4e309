import { existsSync, mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { NodeRed, REPO_ROOT } from '../test/harness/node-red';
import { cpuMicros } from './cpu';
import { benchFlows, benchSettings } from './flows';
import { userDirWithTwilio } from './hand-rolled-flow';
import { drive, type LoadRequest, type LoadResult } from './load';
import { deliveredRate, phase } from './measure';
import type { RemoteFakes } from './remote-fakes';

export interface Measured extends LoadResult {
  repliesPerSecond?: number;
  /** Node-RED's CPU time per request sent (warm-up included), until the last reply was delivered. */
  cpuPerRequestUs?: number;
}

export interface Bracketed extends Measured {
  /** The mean of the baselines before and after the phase. */
  baselineRps: number;
  /** The same for the CPU per request of those baselines. */
  baselineCpuPerRequestUs?: number;
}

export interface MeasureOptions {
  url?: string;
  /** Which replies at the fake API are this phase's. */
  replies?: (d: { to: string }) => boolean;
  /** Measured seconds, when not the run's. */
  seconds?: number;
}

export interface RuntimeStats {
  live: number;
  heapUsed: number;
  rss: number;
}

export interface BenchOptions {
  seconds: number;
  warmupSeconds: number;
  connections: number;
  users: number;
  /** `--cpu-prof`: profile the Node-RED process (written to bench-results/profiles/ when it stops). */
  profile: boolean;
  /** A baseline after every phase; without (`--quick`), phases divide by the latest baseline before them. */
  bracket: boolean;
}

/**
 * One Node-RED under benchmark, with the baseline measured around every phase: each phase divides
 * by the mean of the baselines before and after it, so a drift of the shared machine does not
 * land on one side.
 */
export class BenchRuntime {
  readonly baselines: Array<LoadResult & { cpuPerRequestUs?: number }> = [];
  private previous: (LoadResult & { cpuPerRequestUs?: number }) | undefined;
  /** With `--cpu-prof`: when each measured phase ran, on the clock of the profiles' sample times (µs). */
  private readonly windows: Array<{ name: string; startUs: number; endUs: number }> = [];

  private constructor(
    readonly red: NodeRed,
    readonly fakes: RemoteFakes,
    readonly options: BenchOptions,
  ) {}

  /** `packageDir`: the package build under benchmark (default: this repository's; `--compare` gives an earlier one). */
  static async start(fakes: RemoteFakes, synchronous: 'NORMAL' | 'FULL', options: BenchOptions, packageDir?: string): Promise<BenchRuntime> {
    const profileDir = join(REPO_ROOT, 'bench-results', 'profiles');
    const red = await NodeRed.start({
      userDir: userDirWithTwilio(),
      ...(packageDir ? { packageDir } : {}),
      settings: benchSettings(synchronous),
      nodeArgs: ['--expose-gc', '--max-old-space-size=4096', ...(options.profile ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [])],
    });
    const runtime = new BenchRuntime(red, fakes, options);
    await red.deploy(benchFlows(runtime.base, fakes.slackUrl, fakes.twilioUrl));
    return runtime;
  }

  get base(): string {
    return this.red.url('').replace(/\/$/, '');
  }

  /** The durable store's database file. */
  get databasePath(): string {
    return join(this.red.userDir, 'channel-sessions.db');
  }

  /** The durable store's database and its write-ahead log, in bytes. */
  databaseBytes(): number {
    const file = this.databasePath;
    return [file, `${file}-wal`].reduce((sum, f) => sum + (existsSync(f) ? statSync(f).size : 0), 0);
  }

  /** Live Sessions of every store, and the live heap (after gc()). */
  async stats(): Promise<RuntimeStats> {
    return (await this.red.admin('GET', '/channel-sessions/stats')).body as RuntimeStats;
  }

  /**
   * Sends `count` requests that each open a Session, and waits until all of them are live (a
   * webhook is answered once recorded; its step runs after).
   */
  async open(count: number, next: (i: number) => LoadRequest): Promise<RuntimeStats> {
    const target = (await this.stats()).live + count;
    await this.sendAll(count, next);
    let now = await this.stats();
    for (let i = 0; i < 1200 && now.live < target; i++) {
      await new Promise((r) => setTimeout(r, 250));
      now = await this.stats();
    }
    if (now.live < target) throw new Error(`only ${now.live} of ${target} Sessions live`);
    return now;
  }

  /** Sends `count` requests, each answered with a 2xx, or fails saying how many were not. */
  async sendAll(count: number, next: (i: number) => LoadRequest): Promise<void> {
    const result = await drive(this.base, { amount: count, connections: Math.min(64, count), next });
    if (result.non2xx || result.errors) throw new Error(`opening conversations: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
  }

  /** A bare `http in` -> `http response` flow on the same runtime. */
  async baseline(when: string): Promise<LoadResult & { cpuPerRequestUs?: number }> {
    const { users } = this.options;
    const cpu = this.cpuMeter();
    const counted = countingRequests((i) => ({
      method: 'POST',
      path: '/bench/baseline',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ user: `U${i % users}`, text: 'hi' }),
    }));
    const result = { ...(await this.phase(`baseline (http in -> http response), ${when}`, counted.next)), cpuPerRequestUs: cpu(counted.sent()) };
    this.baselines.push(result);
    this.previous = result;
    return result;
  }

  /**
   * A phase measured between two baselines (or after one, without `bracket`); the first baseline is
   * taken when none is yet.
   */
  async bracketed(name: string, next: (i: number) => LoadRequest, options: MeasureOptions = {}): Promise<Bracketed> {
    return this.around(() => this.measured(name, next, options));
  }

  /** Runs `work` (phases) between two baselines and gives each the mean of the two. */
  async around<T extends Measured | Measured[]>(work: () => Promise<T>): Promise<T extends Measured[] ? Bracketed[] : Bracketed> {
    const before = this.previous ?? (await this.baseline('first'));
    const results = await work();
    const after = this.options.bracket ? await this.baseline('again') : before;
    const baseline = {
      baselineRps: (before.requestsPerSecond + after.requestsPerSecond) / 2,
      ...(before.cpuPerRequestUs && after.cpuPerRequestUs ? { baselineCpuPerRequestUs: (before.cpuPerRequestUs + after.cpuPerRequestUs) / 2 } : {}),
    };
    const bracketed = (Array.isArray(results) ? results : [results]).map((result) => ({ ...result, ...baseline }));
    return (Array.isArray(results) ? bracketed : bracketed[0]) as T extends Measured[] ? Bracketed[] : Bracketed;
  }

  /**
   * A load phase, with the Node-RED CPU it cost per request. With `replies`, the replies delivered
   * per second are counted once they stop arriving (a backlog of steps would otherwise run during
   * the next phase).
   */
  async measured(name: string, next: (i: number) => LoadRequest, options: MeasureOptions = {}): Promise<Measured> {
    const cpu = this.cpuMeter();
    const counted = countingRequests(next);
    const startUs = monotonicUs();
    const result = await this.phase(name, counted.next, options.url, options.seconds);
    const repliesPerSecond = options.replies ? await this.deliveredRate(result, options.replies) : undefined;
    const cpuPerRequestUs = cpu(counted.sent());
    if (this.options.profile) this.windows.push({ name, startUs, endUs: monotonicUs() });
    if (cpuPerRequestUs !== undefined) process.stdout.write(`  ${Math.round(cpuPerRequestUs)} µs of Node-RED CPU per request (warm-up and replies included)\n`);
    return { ...result, ...(repliesPerSecond === undefined ? {} : { repliesPerSecond }), ...(cpuPerRequestUs === undefined ? {} : { cpuPerRequestUs }) };
  }

  /** Starts counting the runtime's CPU time; the returned function gives µs per request since. */
  cpuMeter(): (requests: number) => number | undefined {
    const start = cpuMicros(this.red.pid);
    return (requests) => {
      const end = cpuMicros(this.red.pid);
      return start === undefined || end === undefined || !requests ? undefined : (end - start) / requests;
    };
  }

  /**
   * Load on a path that is not measured: the first seconds a runtime spends on a path (replies
   * through a provider client, a channel's routes) cost 20-50% more CPU per request than the
   * same path later, well past a phase's own warm-up (BENCHMARKS.md, "The first replying
   * phase"). So each channel phase runs this first, for half its length, and a phase that
   * sends replies waits here until they stop arriving, so none is counted in the phase after.
   */
  async unmeasured(name: string, next: (i: number) => LoadRequest, options: { url?: string; replies?: (d: { to: string }) => boolean } = {}): Promise<void> {
    const { connections } = this.options;
    const seconds = this.options.seconds / 2;
    const result = await phase(`${name} (not measured)`, () => drive(options.url ?? this.base, { seconds, connections, next }));
    if (options.replies) await this.deliveredRate(result, options.replies);
  }

  /** A load phase with its warm-up, printed as it ends. */
  phase(name: string, next: (i: number) => LoadRequest, url = this.base, seconds = this.options.seconds): Promise<LoadResult> {
    const { warmupSeconds, connections } = this.options;
    return phase(name, () => drive(url, { seconds, warmupSeconds, connections, next }));
  }

  /** Replies that reached the fake API for a run, per second from its start to the last reply. */
  deliveredRate(run: LoadResult, mine: (d: { to: string }) => boolean): Promise<number> {
    return deliveredRate(this.fakes, run, mine);
  }

  /** Stops the runtime the way a service manager does, keeping its user dir (and database). */
  async stop(): Promise<void> {
    await this.red.stop();
  }

  /** Starts it again on the same user dir, flows and port. */
  async relaunch(): Promise<void> {
    await this.red.relaunch();
  }

  async close(): Promise<void> {
    const { pid } = this.red;
    await this.red.close();
    // Given to the runtime (not made by it), so not removed by it.
    rmSync(this.red.userDir, { recursive: true, force: true });
    if (this.options.profile && this.windows.length) {
      // Beside the profile the runtime wrote as it stopped: `profile-top.mjs --phase=<name part>` reads it.
      const dir = join(REPO_ROOT, 'bench-results', 'profiles');
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, `phases-${pid}.json`), JSON.stringify(this.windows, null, 1));
    }
  }
}

/** Node's hrtime and V8's profile timestamps read the same monotonic clock. */
function monotonicUs(): number {
  return Number(process.hrtime.bigint() / 1000n);
}

/** Counts the requests a phase builds (warm-up included). */
function countingRequests(next: (i: number) => LoadRequest): { next: (i: number) => LoadRequest; sent: () => number } {
  let sent = 0;
  return {
    next: (i) => {
      sent++;
      return next(i);
    },
    sent: () => sent,
  };
}
