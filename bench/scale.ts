import { continueLatency, continueSamples, inboundSms, percentiles, userNumber, type MessagingTarget } from './messaging';
import type { RemoteFakes } from './remote-fakes';
import { BenchRuntime, type BenchOptions } from './runtime';
import { seedWaitingSessions } from './seed';

export interface ScalePoint {
  /** Waiting Sessions of the Environment under test. */
  sessions: number;
  /** Live Sessions of every store in the runtime. */
  live: number;
  /** The live heap after gc(), and the process's resident memory. */
  heapUsed: number;
  rss: number;
  continueP50Ms: number;
  continueP90Ms: number;
  /** How these Sessions were opened: through webhooks, or written into the database before a start. */
  how: 'webhooks' | 'seeded';
  /** How long opening them took. */
  openSeconds: number;
  /** The durable store's database and write-ahead log, in bytes. */
  databaseBytes?: number;
}

const TO = '+15550000002';

/**
 * Opens Sessions on one messaging Environment through signed webhooks, each left waiting at an
 * InputTask, up to each of `points`; measures each point (see `measure`).
 */
export async function scaleThroughWebhooks(
  bench: BenchRuntime,
  target: MessagingTarget,
  prefix: string,
  points: number[],
  samples: number,
): Promise<Record<number, ScalePoint>> {
  let created = 0;
  const out: Record<number, ScalePoint> = {};
  for (const point of points) {
    process.stdout.write(`… scale, ${target.label}: opening ${point - created} Sessions through webhooks (to ${point})\n`);
    const opening = Date.now();
    const from = created;
    await bench.open(point - created, (i) => inboundSms(bench.base, target, userNumber(prefix, from + i), TO, 'open'));
    created = point;
    out[point] = await measure(bench, target, prefix, point, samples, 'webhooks', (Date.now() - opening) / 1000);
  }
  return out;
}

/** The latency at the largest point against the smallest, measured side by side. */
export interface SideBySide {
  small: { sessions: number; p50: number; p90: number };
  large: { sessions: number; p50: number; p90: number };
  /** Blocks of samples taken in turn on each runtime. */
  rounds: number;
  samplesEach: number;
}

/**
 * The durable store at scale, on a runtime of its own (its database holds only these Sessions):
 * the first points opened through webhooks, then the runtime stopped, the rest written into its
 * SQLite file with the package's own store class (`seedWaitingSessions`), and the runtime started
 * again for the last point. Then a second runtime with the smallest point's Sessions, and the
 * latency of both taken in turn, block by block: a drift of the shared machine between two
 * points measured minutes apart moved the ratio by more than the store did.
 */
export async function durableScale(
  fakes: RemoteFakes,
  options: BenchOptions,
  target: MessagingTarget,
  prefix: string,
  webhookPoints: number[],
  seededPoint: number,
  samples: number,
): Promise<{ points: Record<number, ScalePoint>; sideBySide: SideBySide }> {
  const large = await BenchRuntime.start(fakes, 'NORMAL', options);
  let small: BenchRuntime | undefined;
  try {
    const points = await scaleThroughWebhooks(large, target, prefix, webhookPoints, samples);
    const from = webhookPoints[webhookPoints.length - 1];
    process.stdout.write(`… scale, ${target.label}: runtime stopped, writing ${seededPoint - from} waiting Sessions into its database (to ${seededPoint})\n`);
    await large.stop();
    const seeding = Date.now();
    await seedWaitingSessions({
      databasePath: large.databasePath,
      environment: target.environment,
      to: TO,
      templateUser: userNumber(prefix, 0),
      users: (n) => userNumber(prefix, n),
      from,
      count: seededPoint - from,
    });
    const seconds = (Date.now() - seeding) / 1000;
    await large.relaunch();
    points[seededPoint] = await measure(large, target, prefix, seededPoint, samples, 'seeded', seconds);

    const smallest = webhookPoints[0];
    process.stdout.write(`… scale, ${target.label}: a second runtime with ${smallest} Sessions; both measured in turn\n`);
    small = await BenchRuntime.start(fakes, 'NORMAL', options);
    await small.open(smallest, (i) => inboundSms(small!.base, target, userNumber(prefix, i), TO, 'open'));
    const rounds = 10;
    const block = Math.max(10, Math.round(samples / rounds));
    const latencies = { small: [] as number[], large: [] as number[] };
    for (let round = 0; round < rounds; round++) {
      const warmup = round === 0 ? Math.min(100, samples) : 0;
      latencies.small.push(...(await continueSamples(small, target, prefix, TO, smallest, block, warmup)));
      latencies.large.push(...(await continueSamples(large, target, prefix, TO, seededPoint, block, warmup)));
    }
    const sideBySide = {
      small: { sessions: smallest, ...percentiles(latencies.small) },
      large: { sessions: seededPoint, ...percentiles(latencies.large) },
      rounds,
      samplesEach: block * rounds,
    };
    process.stdout.write(
      `  side by side: continue p50 ${sideBySide.large.p50} ms at ${seededPoint}, ${sideBySide.small.p50} ms at ${smallest} (p90 ${sideBySide.large.p90} / ${sideBySide.small.p90})\n`,
    );
    return { points, sideBySide };
  } finally {
    await small?.close();
    await large.close();
  }
}

/**
 * One scale point: the latency of continuing random Sessions one at a time (after a short
 * unmeasured warm-up, so a runtime just started is measured warm), then the live heap after gc().
 */
async function measure(
  bench: BenchRuntime,
  target: MessagingTarget,
  prefix: string,
  sessions: number,
  samples: number,
  how: ScalePoint['how'],
  openSeconds: number,
): Promise<ScalePoint> {
  // Let the opening burst's garbage and writes settle first.
  await new Promise((r) => setTimeout(r, 1000));
  const latency = await continueLatency(bench, target, prefix, TO, sessions, samples);
  const now = await bench.stats();
  const point = {
    sessions,
    live: now.live,
    heapUsed: now.heapUsed,
    rss: now.rss,
    continueP50Ms: latency.p50,
    continueP90Ms: latency.p90,
    how,
    openSeconds,
    databaseBytes: bench.databaseBytes(),
  };
  process.stdout.write(
    `  ${sessions} Sessions (${how}, ${openSeconds.toFixed(1)} s), ${now.live} live in the runtime, heap ${(now.heapUsed / 2 ** 20).toFixed(1)} MB, continue p50 ${latency.p50} ms (p90 ${latency.p90})\n`,
  );
  return point;
}
