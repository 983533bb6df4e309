/**
 * The package's counters and histograms, one set per runtime (the Engine owns it), written in the
 * Prometheus text format (version 0.0.4) by a few lines of our own rather than a client library:
 * counters, one histogram and gauges read at scrape time are all it needs. Every metric name
 * begins `channel_sessions_`. Label values come from fixed words, route patterns, node types and
 * deployed Environments, and each metric keeps at most MAX_SERIES label sets whatever a caller
 * passes, so memory stays bounded.
 */
import { subscribe } from 'node:diagnostics_channel';
import { PROVIDER_CALLS_CHANNEL, type ProviderCallEvent } from '../http/provider-retry';
import { WEBHOOKS_CHANNEL, type WebhookEvent } from '../http/routes';
import { runtimeKey, type RED } from '../model/red';

export type Labels = Record<string, string>;

const MAX_SERIES = 500;
/** Step durations in seconds: a step is mostly a store write and a provider call or two. */
const STEP_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

interface Counter {
  kind: 'counter';
  help: string;
  series: Map<string, { labels: Labels; value: number }>;
}

interface Histogram {
  kind: 'histogram';
  help: string;
  buckets: number[];
  series: Map<string, { labels: Labels; counts: number[]; sum: number; count: number }>;
}

/** A gauge's samples, read when scraped (from the stores' own counts). */
export interface GaugeSample {
  labels: Labels;
  value: number;
}

export const METRIC = {
  webhooks: 'channel_sessions_webhooks_total',
  steps: 'channel_sessions_steps_total',
  stepSeconds: 'channel_sessions_step_duration_seconds',
  providerCalls: 'channel_sessions_provider_calls_total',
  providerRetries: 'channel_sessions_provider_retries_total',
  providerFailures: 'channel_sessions_provider_failures_total',
  storeFaults: 'channel_sessions_store_faults_total',
  sessions: 'channel_sessions_sessions',
  waiting: 'channel_sessions_sessions_waiting',
  waitingAtNode: 'channel_sessions_sessions_waiting_at_node',
} as const;

export class Metrics {
  private readonly metrics = new Map<string, Counter | Histogram>();

  constructor() {
    this.counter(
      METRIC.webhooks,
      'Webhooks answered, by route, outcome (accepted or refused) and reason (why a refusal: signature, unknown_environment, bad_request, conflict, too_large, store_unavailable, error, or http_4xx for another status; empty when accepted)',
    );
    this.counter(METRIC.steps, 'Steps run (one inbound item handled), by channel and outcome (committed, or retry: left recorded to run again)');
    this.histogram(METRIC.stepSeconds, 'How long a step took, from taking its item to committing it, by channel', STEP_BUCKETS);
    this.counter(METRIC.providerCalls, 'Calls to a provider API (twilio, slack, download), each counted once however many attempts it took');
    this.counter(METRIC.providerRetries, 'Attempts sent again after a provider answered 429 or 5xx or the connection failed');
    this.counter(METRIC.providerFailures, 'Provider calls that failed for good (after their retries, or not retried)');
    this.counter(METRIC.storeFaults, 'Session store calls that failed (the store could not be written or read), by store kind');
  }

  /** A webhook answered: accepted (2xx), else refused with the reason its status says. */
  webhook(route: string, status: number): void {
    const accepted = status >= 200 && status < 300;
    this.inc(METRIC.webhooks, { route, outcome: accepted ? 'accepted' : 'refused', reason: accepted ? '' : refusalReason(status) });
  }

  step(kind: string, outcome: string, seconds: number): void {
    this.inc(METRIC.steps, { kind, outcome });
    this.observe(METRIC.stepSeconds, { kind }, seconds);
  }

  provider(event: ProviderCallEvent): void {
    const name = event.event === 'call' ? METRIC.providerCalls : event.event === 'retry' ? METRIC.providerRetries : METRIC.providerFailures;
    this.inc(name, { provider: event.provider });
  }

  storeFault(store: { durable: boolean; shared: boolean }): void {
    this.inc(METRIC.storeFaults, { store: storeKind(store) });
  }

  inc(name: string, labels: Labels, by = 1): void {
    const metric = this.metrics.get(name);
    if (metric?.kind !== 'counter') return;
    const key = keyOf(labels);
    const series = metric.series.get(key);
    if (series) series.value += by;
    else if (metric.series.size < MAX_SERIES) metric.series.set(key, { labels, value: by });
  }

  observe(name: string, labels: Labels, value: number): void {
    const metric = this.metrics.get(name);
    if (metric?.kind !== 'histogram') return;
    const key = keyOf(labels);
    let series = metric.series.get(key);
    if (!series) {
      if (metric.series.size >= MAX_SERIES) return;
      series = { labels, counts: metric.buckets.map(() => 0), sum: 0, count: 0 };
      metric.series.set(key, series);
    }
    metric.buckets.forEach((le, i) => {
      if (value <= le) series.counts[i] += 1;
    });
    series.sum += value;
    series.count += 1;
  }

  /**
   * The exposition text of these counters and histograms as they are now. A scrape takes it before
   * it reads the stores' counts (`gaugeText`): a step counted as committed is then in the store
   * the gauges are read from, so one scrape never counts a step whose Session it does not show.
   */
  countersText(): string {
    const lines: string[] = [];
    for (const [name, metric] of this.metrics) {
      lines.push(`# HELP ${name} ${metric.help}`, `# TYPE ${name} ${metric.kind}`);
      if (metric.kind === 'counter') {
        for (const s of metric.series.values()) lines.push(`${name}${labelText(s.labels)} ${s.value}`);
        continue;
      }
      for (const s of metric.series.values()) {
        metric.buckets.forEach((le, i) => lines.push(`${name}_bucket${labelText({ ...s.labels, le: String(le) })} ${s.counts[i]}`));
        lines.push(`${name}_bucket${labelText({ ...s.labels, le: '+Inf' })} ${s.count}`);
        lines.push(`${name}_sum${labelText(s.labels)} ${s.sum}`, `${name}_count${labelText(s.labels)} ${s.count}`);
      }
    }
    return lines.join('\n') + '\n';
  }

  private counter(name: string, help: string): void {
    this.metrics.set(name, { kind: 'counter', help, series: new Map() });
  }

  private histogram(name: string, help: string, buckets: number[]): void {
    this.metrics.set(name, { kind: 'histogram', help, buckets, series: new Map() });
  }
}

/** The exposition text of gauges read from the stores (after `countersText`). */
export function gaugeText(gauges: Array<{ name: string; help: string; samples: GaugeSample[] }>): string {
  const lines: string[] = [];
  for (const gauge of gauges) {
    lines.push(`# HELP ${gauge.name} ${gauge.help}`, `# TYPE ${gauge.name} gauge`);
    for (const s of gauge.samples.slice(0, MAX_SERIES)) lines.push(`${gauge.name}${labelText(s.labels)} ${s.value}`);
  }
  return lines.length ? lines.join('\n') + '\n' : '';
}

function keyOf(labels: Labels): string {
  return Object.keys(labels)
    .sort()
    .map((k) => `${k}\u0000${labels[k]}`)
    .join('\u0001');
}

function labelText(labels: Labels): string {
  const parts = Object.entries(labels).map(([k, v]) => `${k}="${v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"')}"`);
  return parts.length ? `{${parts.join(',')}}` : '';
}

/** A store's kind for labels: sqlite, redis or memory (never its path or address). */
export function storeKind(store: { durable: boolean; shared: boolean }): string {
  return store.shared ? 'redis' : store.durable ? 'sqlite' : 'memory';
}

/** Why a webhook was refused, from its status, in a few fixed words. */
function refusalReason(status: number): string {
  switch (status) {
    case 400:
      return 'bad_request';
    case 401:
    case 403:
      return 'signature';
    case 404:
      return 'unknown_environment';
    case 409:
      return 'conflict';
    case 413:
      return 'too_large';
    case 503:
      return 'store_unavailable';
    default:
      return status >= 500 ? 'error' : `http_${Math.floor(status / 100)}xx`;
  }
}

/**
 * Counts what the webhook routes and the provider clients report on their diagnostics channels
 * (they are made far from any runtime, so they publish instead of holding a counter). Webhooks
 * carry their runtime and only this one's are counted; provider calls are the process's.
 */
export function watchMetrics(red: RED, metrics: Metrics): void {
  subscribe(WEBHOOKS_CHANNEL, (message) => {
    const event = message as WebhookEvent;
    if (runtimeKey(event.red) === runtimeKey(red)) metrics.webhook(event.route, event.status);
  });
  subscribe(PROVIDER_CALLS_CHANNEL, (message) => metrics.provider(message as ProviderCallEvent));
}
