import type { LoadResult } from './load';
import type { RemoteFakes } from './remote-fakes';

/** Runs a load phase and prints its figures as it ends. */
export async function phase<T extends LoadResult>(name: string, run: () => Promise<T>): Promise<T> {
  process.stdout.write(`… ${name}\n`);
  const result = await run();
  process.stdout.write(
    `  ${Math.round(result.requestsPerSecond)} req/s, p50 ${result.p50} ms, p99 ${result.p99} ms, non-2xx ${result.non2xx}, errors ${result.errors}\n`,
  );
  return result;
}

/** Replies that reached the fake API for a run, per second from its start to the last reply, once they stop arriving. */
export async function deliveredRate(fakes: RemoteFakes, run: LoadResult, mine: (d: { to: string }) => boolean): Promise<number> {
  let last = -1;
  for (let i = 0; i < 100; i++) {
    const count = (await fakes.deliveredSince(run.started)).filter(mine).length;
    if (count === last) break;
    last = count;
    await new Promise((r) => setTimeout(r, 200));
  }
  const delivered = (await fakes.deliveredSince(run.started)).filter(mine);
  if (!delivered.length) return 0;
  const end = Math.max(...delivered.map((d) => d.at));
  return delivered.length / Math.max(0.001, (end - run.started) / 1000);
}

/** Waits until a count stops growing for 3 s (at most 120 s). */
export async function settled(count: () => Promise<number>): Promise<void> {
  let last = -1;
  let still = Date.now();
  const deadline = Date.now() + 120000;
  while (Date.now() < deadline) {
    const now = await count();
    if (now !== last) {
      last = now;
      still = Date.now();
    } else if (Date.now() - still > 3000) {
      return;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}
