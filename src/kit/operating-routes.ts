import type { Engine } from '../engine/engine';
import { METRIC, gaugeText, storeKind, type GaugeSample } from '../engine/metrics';
import { routeOnce } from '../http/routes';
import type { RED } from '../model/red';
import type { ChannelCount, SessionStore } from '../stores/session-store';

/** How long a store may take to answer the health probe before the instance counts as unhealthy. */
const PROBE_TIMEOUT_MS = 2000;
/** The one key the probe writes (and writes again): it proves a write works and never adds a row. */
const PROBE_KEY = 'channel-sessions/health';

/**
 * The two routes an operator watches the package by:
 * - `GET /channel-sessions/health` on the httpNode root, no auth (load balancers and monitors):
 *   200 `{"status":"ok"}` while this instance's flows run and every Session store it uses takes a
 *   write; else 503 with the reason. The reason names the store's kind, never its path or address.
 * - `GET /channel-sessions/metrics` on the admin API, behind the editor's read permission: the
 *   Prometheus text format (engine/metrics.ts), with the Session gauges read from the stores'
 *   own counts at each scrape.
 */
export function registerOperatingRoutes(red: RED, engine: Engine): void {
  routeOnce(
    red,
    'get',
    '/channel-sessions/health',
    (_req, res) => {
      void health(engine).then((outcome) => {
        res.status(outcome.status === 'ok' ? 200 : 503).set('Cache-Control', 'no-store');
        res.json(outcome);
      });
    },
    { webhook: false },
  );

  red.httpAdmin.get('/channel-sessions/metrics', red.auth.needsPermission('channel-sessions.read'), (_req, res) => {
    const counters = engine.metrics.countersText();
    void gauges(engine).then((samples) => {
      res.status(200).set('Content-Type', 'text/plain; version=0.0.4; charset=utf-8');
      res.send(counters + gaugeText(samples));
    });
  });
}

type Health = { status: 'ok' } | { status: 'unavailable'; reason: string };

async function health(engine: Engine): Promise<Health> {
  if (!engine.running) return { status: 'unavailable', reason: 'the flows are not running' };
  for (const env of engine.attachedEnvironments()) {
    if (!(await answers(env.ready))) return { status: 'unavailable', reason: `a Session store (${storeKind(env.store)}) could not be opened` };
  }
  for (const store of engine.sessionStores()) {
    if (!(await answers(store.seen(PROBE_KEY, 1)))) return { status: 'unavailable', reason: `a Session store (${storeKind(store)}) does not answer` };
  }
  return { status: 'ok' };
}

/** Whether the work settles well within the probe's time. */
async function answers(work: Promise<unknown>): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), PROBE_TIMEOUT_MS)));
  try {
    return await Promise.race([work.then(() => true as const), late]);
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Live and waiting Sessions per attached Environment and Channel, and waiting Sessions per node, at
 * scrape time, from the counts the stores keep (each store asked once, however many Environments
 * share it).
 */
async function gauges(engine: Engine): Promise<Array<{ name: string; help: string; samples: GaugeSample[] }>> {
  const live: GaugeSample[] = [];
  const waitingAt: GaugeSample[] = [];
  const byStore = new Map<SessionStore, Promise<ChannelCount[]>>();
  for (const env of engine.attachedEnvironments()) {
    let counts = byStore.get(env.store);
    if (!counts) byStore.set(env.store, (counts = env.store.countByChannel().catch(() => [])));
    const mine = new Map<string, ChannelCount>();
    for (const count of await counts) if (count.environment === env.id) mine.set(count.channel, count);
    // Every Channel the Environment serves has its series, 0 when no Session is live on it, so an
    // alert on a value sees 0 rather than no data; a Channel outside its module's (a test Session's) only when counted.
    for (const channel of new Set<string>([...env.channels, ...mine.keys()])) {
      const count = mine.get(channel);
      const labels = { environment: env.name, environment_id: env.id, module: env.moduleKey, channel };
      live.push({ labels, value: count?.live ?? 0 });
      waitingAt.push({ labels, value: count?.waiting ?? 0 });
    }
  }
  // Only the deployed Environments' stores, as the gauges above: the Test chat's Sessions live in a
  // store of their own and are counted nowhere, so that a dashboard shows real conversations only.
  const byNode = new Map<string, number>();
  for (const store of new Set(engine.attachedEnvironments().map((e) => e.store))) {
    for (const [node, n] of await store.waitingByNode().catch(() => new Map<string, number>())) byNode.set(node, (byNode.get(node) ?? 0) + n);
  }
  return [
    { name: METRIC.sessions, help: 'Live Sessions (running or waiting) per Environment and Channel, from its Session store', samples: live },
    { name: METRIC.waiting, help: 'Sessions waiting for an answer at a node, per Environment and Channel, from its Session store', samples: waitingAt },
    {
      name: METRIC.waitingAtNode,
      help: 'Sessions waiting for an answer, per node they wait at, Test chat Sessions not counted (the canvas "N waiting" counts them too)',
      samples: [...byNode].map(([node, value]) => ({ labels: { node }, value })),
    },
  ];
}
