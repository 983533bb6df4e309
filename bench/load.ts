import autocannon from 'autocannon';

export interface LoadRequest {
  method: 'POST' | 'GET';
  path: string;
  headers: Record<string, string>;
  body?: string;
}

export interface LoadResult {
  requestsPerSecond: number;
  p50: number;
  p99: number;
  requests: number;
  non2xx: number;
  errors: number;
  started: number;
  ended: number;
}

/**
 * Drives one route with autocannon from this process (Node-RED runs in its own): every request is
 * built afresh by `next(i)` so each can come from another user and carry its own signature.
 */
export async function drive(
  baseUrl: string,
  options: {
    seconds?: number;
    amount?: number;
    connections: number;
    next: (i: number) => LoadRequest;
    /** Unmeasured seconds first, so every phase is measured warm (JIT, connections, caches). */
    warmupSeconds?: number;
  },
): Promise<LoadResult> {
  let i = 0;
  const result = await autocannon({
    url: baseUrl,
    connections: options.connections,
    ...(options.amount ? { amount: options.amount } : { duration: options.seconds ?? 5 }),
    timeout: 20,
    ...(options.warmupSeconds ? { warmup: { connections: options.connections, duration: options.warmupSeconds } } : {}),
    requests: [
      {
        setupRequest: (req: any) => {
          const r = options.next(i++);
          return { ...req, method: r.method, path: r.path, headers: r.headers, body: r.body };
        },
      },
    ],
  });
  return {
    requestsPerSecond: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    requests: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    // The measured run's start, after any warm-up.
    started: new Date(result.start).getTime(),
    ended: Date.now(),
  };
}
