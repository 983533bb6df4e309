import { execFileSync } from 'node:child_process';
import { buildEarlier, type EarlierBuild } from './earlier-build';
import { CREDS } from './flows';
import { continueLatency, inboundSms, userNumber, type MessagingTarget } from './messaging';
import { messagingPhases } from './phases';
import { redisMessaging, type RedisMessagingRow } from './redis-messaging';
import { RemoteFakes } from './remote-fakes';
import { writeResults } from './report';
import { BenchRuntime, type BenchOptions, type Bracketed } from './runtime';

/**
 * `npm run bench -- --compare=<ref> [--after=<ref>] [--quick] [--rounds=<n>]`: the messaging rows
 * of this build (or of `--after`) and of `ref` (each built into a temporary folder,
 * bench/earlier-build.ts) in one sitting: on each build's runtime, the messaging round (durable
 * and in-memory, A B B A between two baselines) and the latency of one message at a time
 * (durable), then one instance on Redis with its commands and bytes counted. The two sides of each
 * part run back to back, so they see the same machine; with `--rounds=2` (or more) the order
 * alternates (before, after, after, before …). The machine's load average is recorded before each
 * side.
 */
const quick = process.argv.includes('--quick');
const ref = process.argv.find((a) => a.startsWith('--compare='))?.slice(10) ?? '';
const afterRef = process.argv.find((a) => a.startsWith('--after='))?.slice(8);
const rounds = Number(process.argv.find((a) => a.startsWith('--rounds='))?.slice(9) ?? 1);
const options: BenchOptions = {
  seconds: quick ? 2 : 10,
  warmupSeconds: quick ? 1 : 2,
  connections: 32,
  users: quick ? 300 : 2000,
  bracket: !quick,
  profile: false,
};
/** One message at a time after the round, as `npm run bench` measures it: Sessions opened, then samples. */
const LATENCY = { sessions: quick ? 100 : 200, samples: quick ? 100 : 1000, prefix: '+1559', to: '+15550000002' };
const REDIS = { seconds: quick ? 3 : 10, warmupSeconds: quick ? 1 : 2, connections: 32, users: 500 };
const DURABLE: MessagingTarget = { label: 'durable (SQLite)', token: CREDS.messagingToken, environment: 'envM' };
const MEMORY: MessagingTarget = { label: 'memory', token: CREDS.messagingMemoryToken, environment: 'envMm' };

type Side = 'before' | 'after';

interface SideRun {
  side: Side;
  load: string;
  durable?: Bracketed;
  memory?: Bracketed;
  continueP50?: number;
  continueP90?: number;
  redis?: RedisMessagingRow;
}

async function main(): Promise<void> {
  if (!ref || !Number.isInteger(rounds) || rounds < 1)
    throw new Error('usage: npm run bench -- --compare=<git ref> [--after=<git ref>] [--quick] [--rounds=<n>]');
  const earlier = buildEarlier(ref);
  const builds = [earlier];
  const runs: SideRun[] = [];
  let later: EarlierBuild | undefined;
  try {
    if (afterRef) builds.push((later = buildEarlier(afterRef)));
    await measureSides(runs, earlier, later);
  } finally {
    for (const build of builds) build.remove();
  }
  report(runs, `${ref} (${earlier.commit})`, later ? `${afterRef} (${later.commit})` : 'this checkout', loadAverage());
}

/** Each part's two sides back to back, each round in the other order. */
async function measureSides(runs: SideRun[], earlier: EarlierBuild, later: EarlierBuild | undefined): Promise<void> {
  const packageDir = (side: Side) => (side === 'before' ? earlier.dir : later?.dir);
  const described = (side: Side) => (side === 'before' ? earlier.commit.slice(0, 10) : (later?.commit.slice(0, 10) ?? 'this checkout'));
  const fakes = await RemoteFakes.start();
  try {
    for (let round = 0; round < rounds; round++) {
      const order: Side[] = round % 2 ? ['after', 'before'] : ['before', 'after'];
      for (const side of order) {
        const load = loadAverage();
        process.stdout.write(`… messaging, ${side} (${described(side)}), load ${load}\n`);
        const bench = await BenchRuntime.start(fakes, 'NORMAL', options, packageDir(side));
        try {
          const [durable, memory] = await messagingPhases(bench, [
            { target: DURABLE, prefix: '+1555' },
            { target: MEMORY, prefix: '+1556' },
          ]);
          process.stdout.write(`… continue one message at a time, ${DURABLE.label}\n`);
          const { sessions, samples, prefix, to } = LATENCY;
          await bench.open(sessions, (i) => inboundSms(bench.base, DURABLE, userNumber(prefix, i), to, 'open'));
          const latency = await continueLatency(bench, DURABLE, prefix, to, sessions, samples);
          process.stdout.write(`  p50 ${latency.p50} ms, p90 ${latency.p90} ms\n`);
          runs.push({ side, load, durable, memory, continueP50: latency.p50, continueP90: latency.p90 });
        } finally {
          await bench.close();
        }
      }
      for (const side of order) {
        const load = loadAverage();
        process.stdout.write(`… Redis, ${side} (${described(side)}), load ${load}\n`);
        runs.push({ side, load, redis: await redisMessaging(fakes, REDIS, `one instance on Redis, ${side}`, packageDir(side)) });
      }
    }
  } finally {
    await fakes.stop();
  }
}

/** The load average (1, 5, 15 min) as `uptime` prints it: other work on the machine moves every figure. */
function loadAverage(): string {
  return execFileSync('uptime', { encoding: 'utf8' })
    .replace(/.*load average:\s*/, '')
    .trim();
}

/** Each figure, before and after (the mean of the rounds, each round's values beside it), and after / before. */
function report(runs: SideRun[], before: string, after: string, loadAtEnd: string): void {
  const pick = (side: Side, value: (r: SideRun) => number | undefined) =>
    runs
      .filter((r) => r.side === side)
      .map(value)
      .filter((v): v is number => v !== undefined && Number.isFinite(v));
  const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
  const shown = (values: number[], digits: number) => {
    const round = (v: number) => Math.round(v * 10 ** digits) / 10 ** digits;
    return values.length > 1 ? `${round(mean(values))} (${values.map(round).join(', ')})` : String(round(values[0]));
  };
  const perBaseline = (row: Bracketed | undefined) => (row ? row.requestsPerSecond / row.baselineRps : undefined);
  const rows: Array<[string, (r: SideRun) => number | undefined, number]> = [
    ['Node-RED CPU µs per message, durable (SQLite)', (r) => r.durable?.cpuPerRequestUs, 0],
    ['Node-RED CPU µs per message, in-memory', (r) => r.memory?.cpuPerRequestUs, 0],
    ['webhooks/s, durable', (r) => r.durable?.requestsPerSecond, 0],
    ['webhooks/s, in-memory', (r) => r.memory?.requestsPerSecond, 0],
    ['replies/s, durable', (r) => r.durable?.repliesPerSecond, 0],
    ['continue p50 ms, one message at a time, durable', (r) => r.continueP50, 2],
    ['continue p90 ms, one message at a time, durable', (r) => r.continueP90, 2],
    ['webhooks / baseline, durable', (r) => perBaseline(r.durable), 2],
    ['webhooks/s, durable / in-memory (each / its baseline)', (r) => (r.durable && r.memory ? perBaseline(r.durable)! / perBaseline(r.memory)! : undefined), 2],
    [
      'Node-RED CPU per message, durable / in-memory',
      (r) => (r.durable?.cpuPerRequestUs && r.memory?.cpuPerRequestUs ? r.durable.cpuPerRequestUs / r.memory.cpuPerRequestUs : undefined),
      2,
    ],
    ['Redis commands per message (one instance)', (r) => r.redis?.commandsPerMessage, 2],
    ['Redis bytes per message (one instance)', (r) => r.redis?.bytesPerMessage, 0],
    ['Node-RED CPU µs per message, Redis', (r) => r.redis?.cpuPerMessageUs, 0],
    ['webhooks/s, Redis', (r) => r.redis?.requestsPerSecond, 0],
  ];
  const table = rows.map(([figure, value, digits]) => {
    const [before, after] = [pick('before', value), pick('after', value)];
    return {
      figure,
      before: before.length ? shown(before, digits) : 'n/a',
      after: after.length ? shown(after, digits) : 'n/a',
      'after / before': before.length && after.length ? Math.round((mean(after) / mean(before)) * 100) / 100 : 'n/a',
    };
  });
  console.log(
    `\nbefore: ${before}; after: ${after}. Load average before each side: ${runs.map((r) => `${r.side} ${r.load}`).join('; ')}; at the end ${loadAtEnd}`,
  );
  writeResults(quick ? 'compare-quick' : 'compare', table, { before, after, rounds, runs, loadAtEnd }, quick);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
