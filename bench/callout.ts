import { request } from '../test/harness/node-red';
import { cpuMicros } from './cpu';
import type { BenchRuntime } from './runtime';

/** The numbers Call out's phase calls: a prefix of their own, so its calls are told from replies. */
const CALLOUT_PREFIX = '+1558';

export interface CalloutPhase {
  calls: number;
  placed: number;
  /** Calls placed per second as the fake API saw them, first POST to last. */
  callsPerSecond: number;
  /** Node-RED CPU (µs) from the request until the last call was placed, per placed call. */
  cpuPerCallUs?: number;
}

/**
 * `calls` requests to Call out at once (one POST to an http in fanned out by a function node), on
 * a voice Environment paced at 50 calls a second: the rate the fake Twilio API receives the
 * creates at, and what each placed call costs Node-RED in CPU (the pacing's waits included).
 */
export async function calloutPhase(bench: BenchRuntime, calls: number): Promise<CalloutPhase> {
  process.stdout.write(`… call out, ${calls} calls at callsPerSecond 50\n`);
  const { base, fakes } = bench;
  const mine = (d: { to: string }) => d.to.startsWith(CALLOUT_PREFIX);
  const started = Date.now();
  const cpuStart = cpuMicros(bench.red.pid);
  const res = await request(`${base}/bench/callout`, 'POST', { count: calls, prefix: CALLOUT_PREFIX });
  if (res.status !== 200) throw new Error(`call out request answered ${res.status}: ${res.text}`);
  // Paced at 50 a second: wait for them all, or until no more arrive for 2 s.
  let placed: Array<{ at: number; to: string }> = [];
  for (let last = -1, still = 0; still < 10;) {
    placed = (await fakes.deliveredSince(started)).filter(mine);
    if (placed.length >= calls) break;
    still = placed.length === last ? still + 1 : 0;
    last = placed.length;
    await new Promise((r) => setTimeout(r, 200));
  }
  const cpuEnd = cpuMicros(bench.red.pid);
  const times = placed.map((d) => d.at);
  const span = times.length > 1 ? (Math.max(...times) - Math.min(...times)) / 1000 : 0;
  const result: CalloutPhase = {
    calls,
    placed: placed.length,
    callsPerSecond: span > 0 ? Math.round(((placed.length - 1) / span) * 10) / 10 : 0,
    cpuPerCallUs: cpuStart !== undefined && cpuEnd !== undefined && placed.length ? Math.round((cpuEnd - cpuStart) / placed.length) : undefined,
  };
  process.stdout.write(`  calls placed per second at callsPerSecond 50: ${result.callsPerSecond} (${result.placed} of ${calls} placed)\n`);
  process.stdout.write(`  Node-RED CPU per placed call: ${result.cpuPerCallUs ?? '?'} µs\n`);
  return result;
}
