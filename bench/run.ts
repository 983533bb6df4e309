import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { NodeRed, REPO_ROOT, freePort, request } from '../test/harness/node-red';
import type { Delivery } from './fake-apis';
import { CREDS, benchFlows } from './flows';
import { drive, type LoadRequest, type LoadResult } from './load';
import { slackHeaders, twilioForm } from './signing';

/**
 * `npm run bench`: one Node-RED with the package, fake Slack and Twilio APIs on loopback, driven
 * by autocannon from this process with correctly signed requests from many distinct users. Every
 * figure is a ratio against a baseline measured in the same run on the same runtime.
 */
const quick = process.argv.includes('--quick');
/** `--cpu-prof`: profile the Node-RED process (written to bench-results/profiles/ when it stops). */
const profile = process.argv.includes('--cpu-prof');
/** `--only messaging,voice`: run only these phases (the baseline always runs). */
const only = (process.argv.find((a) => a.startsWith('--only='))?.slice(7) ?? '').split(',').filter(Boolean);
const runs = (name: string) => !only.length || only.includes(name);
const SECONDS = quick ? 3 : 10;
const WARMUP = quick ? 1 : 2;
const CONNECTIONS = 32;
const USERS = 2000;
/** Pre-signed requests per phase; Slack events are signed at send time (their timestamp must be fresh). */
const POOL = 60000;
const SCALE = quick ? [1000, 10000] : [1000, 100000];
const LATENCY_SAMPLES = quick ? 400 : 1000;

async function main(): Promise<void> {
  const fakes = await RemoteFakes.start();
  const profileDir = join(REPO_ROOT, 'bench-results', 'profiles');
  const red = await NodeRed.start({
    nodeArgs: ['--expose-gc', '--max-old-space-size=4096', ...(profile ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [])],
  });
  const base = red.url('').replace(/\/$/, '');
  await red.deploy(benchFlows(base, fakes.slackUrl, fakes.twilioUrl));
  const rows: Record<string, unknown> = {};
  try {
    const measureBaseline = (when: string) => phase(`baseline (http in -> http response), ${when}`, () => drive(base, {
      seconds: SECONDS, warmupSeconds: WARMUP, connections: CONNECTIONS,
      next: (i) => ({ method: 'POST', path: '/bench/baseline', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ user: `U${i % USERS}`, text: 'hi' }) }),
    }));
    // The baseline is measured before and after each channel phase, and each phase divides by the
    // mean of the two around it: a drift of the shared machine does not land on one side.
    let previous = await measureBaseline('first');
    const baselines: LoadResult[] = [previous];
    rows.baselines = baselines;
    const bracketed = async <T extends LoadResult>(result: T): Promise<T & { baselineRps: number }> => {
      const next = await measureBaseline('again');
      baselines.push(next);
      const baselineRps = (previous.requestsPerSecond + next.requestsPerSecond) / 2;
      previous = next;
      return { ...result, baselineRps };
    };

    const inboundPath = `/api/TelcoModule/Messaging/inbound/${CREDS.messagingToken}`;
    let sid = 0;
    if (runs('messaging')) {
    const inbound = presigned(POOL, (i) => {
      const form = twilioForm(CREDS.authToken, base + inboundPath, {
        AccountSid: CREDS.accountSid, MessageSid: `SM${(sid++).toString(16).padStart(32, '0')}`,
        From: `+1555${(i % USERS).toString().padStart(7, '0')}`, To: '+15550000000', Body: `hi ${i}`, NumMedia: '0',
      });
      return { method: 'POST', path: inboundPath, headers: form.headers, body: form.body };
    });
    const messaging = await phase('messaging inbound', () => drive(base, { seconds: SECONDS, warmupSeconds: WARMUP, connections: CONNECTIONS, next: inbound }));
    const messagingReplies = await deliveredRate(fakes, messaging, (d) => d.to.startsWith('+1555'));
    rows.messaging = await bracketed({ ...messaging, repliesPerSecond: messagingReplies });
    }

    const startPath = `/api/TelcoModule/Voice/start/${CREDS.voiceToken}`;
    const nextPath = '/api/TelcoModule/Voice/next/envV';
    const calls = 500;
    if (runs('voice')) {
    for (let c = 0; c < calls; c++) {
      const form = twilioForm(CREDS.authToken, base + startPath, callParams(c));
      await request(base + startPath, 'POST', form.body, form.headers);
    }
    const nextCalls = presigned(calls * 4, (i) => {
      const form = twilioForm(CREDS.authToken, base + nextPath, { ...callParams(i % calls), SpeechResult: `answer ${i}`, Confidence: '0.9' });
      return { method: 'POST', path: nextPath, headers: form.headers, body: form.body };
    });
    const voice = await phase('voice next (Say + Gather)', () => drive(base, { seconds: SECONDS, warmupSeconds: WARMUP, connections: CONNECTIONS, next: nextCalls }));
    rows.voice = await bracketed(voice);
    }

    const eventPath = `/TeamChat/event/${CREDS.teamchatToken}`;
    const slackEvent = (i: number) => JSON.stringify({
      type: 'event_callback', team_id: 'TBENCH', api_app_id: 'ABENCH', event_id: `Ev${i.toString(36)}${Date.now().toString(36)}`, event_time: Math.floor(Date.now() / 1000),
      event: { type: 'message', channel_type: 'im', channel: `D${i % USERS}`, user: `U${i % USERS}`, text: `hi ${i}`, ts: `${Date.now() / 1000}${i}`, event_ts: `${Date.now() / 1000}` },
    });
    if (runs('teamchat')) {
    const teamchat = await phase('team chat events', () => drive(base, {
      seconds: SECONDS, warmupSeconds: WARMUP, connections: CONNECTIONS,
      next: (i) => {
        const body = slackEvent(i);
        return { method: 'POST', path: eventPath, headers: slackHeaders(CREDS.signingSecret, body), body };
      },
    }));
    rows.teamchat = await bracketed({ ...teamchat, repliesPerSecond: await deliveredRate(fakes, teamchat, (d) => d.to.startsWith('D')) });

    rows.bolt = await boltPeer('Slack Bolt HTTP receiver (peer, acknowledging only)', []);
    const replying = await boltPeer('Slack Bolt app replying to each message (peer, the same job)', [fakes.slackUrl]);
    rows.boltReplying = { ...replying, repliesPerSecond: await deliveredRate(fakes, replying, (d) => d.to.startsWith('D')) };
    }

    async function boltPeer(name: string, extraArgs: string[]): Promise<LoadResult> {
      const boltPort = await freePort();
      const bolt = spawn(process.execPath, [join(__dirname, 'bolt-peer.js'), String(boltPort), CREDS.signingSecret, ...extraArgs], { stdio: ['ignore', 'pipe', 'inherit'] });
      await new Promise<void>((r) => bolt.stdout?.on('data', (d: Buffer) => d.toString().includes('READY') && r()));
      try {
        return await phase(name, () => drive(`http://127.0.0.1:${boltPort}`, {
          seconds: SECONDS, warmupSeconds: WARMUP, connections: CONNECTIONS,
          next: (i) => {
            const body = slackEvent(i);
            return { method: 'POST', path: '/slack/events', headers: slackHeaders(CREDS.signingSecret, body), body };
          },
        }));
      } finally {
        bolt.kill();
      }
    }


    if (runs('scale')) rows.scale = await scale(red, fakes, base, inboundPath);
  } finally {
    await red.close();
    await fakes.stop();
  }
  report(rows);
}

function callParams(c: number): Record<string, string> {
  return { AccountSid: CREDS.accountSid, CallSid: `CA${c.toString(16).padStart(32, '0')}`, From: `+1666${c.toString().padStart(7, '0')}`, To: '+15550000001', Direction: 'inbound', CallStatus: 'in-progress' };
}

/** The fake APIs running in their own process (bench/fake-apis-process.ts). */
export class RemoteFakes {
  private constructor(private readonly child: ReturnType<typeof spawn>, readonly port: number) {}

  static async start(): Promise<RemoteFakes> {
    const child = spawn(process.execPath, [join(__dirname, 'fake-apis-process.js')], { stdio: ['ignore', 'pipe', 'inherit'] });
    const port = await new Promise<number>((resolve) => child.stdout?.on('data', (d: Buffer) => {
      const m = /PORT (\d+)/.exec(d.toString());
      if (m) resolve(Number(m[1]));
    }));
    return new RemoteFakes(child, port);
  }

  get slackUrl(): string {
    return `http://127.0.0.1:${this.port}/api/`;
  }

  get twilioUrl(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async deliveredSince(t: number): Promise<Delivery[]> {
    return (await request(`http://127.0.0.1:${this.port}/__deliveries?since=${t}`, 'GET')).body;
  }

  async waitFor(to: string, since: number): Promise<void> {
    const res = await request(`http://127.0.0.1:${this.port}/__wait?to=${encodeURIComponent(to)}&since=${since}`, 'GET');
    if (res.status !== 200) throw new Error(`no reply reached ${to}`);
  }

  async stop(): Promise<void> {
    this.child.kill();
  }
}

/** Signs requests before a run, so the load generator spends the run sending, not hashing. */
export function presigned(count: number, make: (i: number) => LoadRequest): (i: number) => LoadRequest {
  const pool = Array.from({ length: count }, (_, i) => make(i));
  return (i) => pool[i % count];
}

export async function phase<T extends LoadResult>(name: string, run: () => Promise<T>): Promise<T> {
  process.stdout.write(`… ${name}\n`);
  const result = await run();
  process.stdout.write(`  ${Math.round(result.requestsPerSecond)} req/s, p50 ${result.p50} ms, p99 ${result.p99} ms, non-2xx ${result.non2xx}, errors ${result.errors}\n`);
  return result;
}

/** Replies that reached the fake API for a run, per second from its start to the last reply. */
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

/** Heap per waiting Session at each scale, and the latency of continuing one. */
async function scale(red: NodeRed, fakes: RemoteFakes, base: string, inboundPath: string) {
  const stats = async () => (await red.admin('GET', '/channel-sessions/stats')).body as { live: number; heapUsed: number };
  const before = await stats();
  let previous = before;
  const out: Record<string, unknown> = {};
  let created = 0;
  let sid = 1e9;
  for (const target of SCALE) {
    const toCreate = target - created;
    process.stdout.write(`… scale: opening ${toCreate} Sessions (to ${target})\n`);
    await drive(base, {
      amount: toCreate, connections: 64,
      next: (i) => {
        const form = twilioForm(CREDS.authToken, base + inboundPath, {
          AccountSid: CREDS.accountSid, MessageSid: `SM${(sid++).toString(16).padStart(32, '0')}`,
          From: `+1777${(created + i).toString().padStart(7, '0')}`, To: '+15550000002', Body: 'open', NumMedia: '0',
        });
        return { method: 'POST', path: inboundPath, headers: form.headers, body: form.body };
      },
    });
    created = target;
    let now = await stats();
    for (let i = 0; i < 600 && now.live < before.live + target; i++) {
      await new Promise((r) => setTimeout(r, 250));
      now = await stats();
    }
    // Per Session: the slope from the previous scale point, so garbage and caches of earlier
    // phases do not count.
    const perSession = (now.heapUsed - previous.heapUsed) / (now.live - previous.live);
    previous = now;
    // Let the opening burst's garbage and saves settle, then take enough samples that a pause of
    // the shared machine moves the median little.
    await new Promise((r) => setTimeout(r, 1000));
    const latencies: number[] = [];
    for (let k = 0; k < LATENCY_SAMPLES; k++) {
      const n = Math.floor(Math.random() * target);
      const from = `+1777${n.toString().padStart(7, '0')}`;
      const form = twilioForm(CREDS.authToken, base + inboundPath, {
        AccountSid: CREDS.accountSid, MessageSid: `SM${(sid++).toString(16).padStart(32, '0')}`, From: from, To: '+15550000002', Body: `more ${k}`, NumMedia: '0',
      });
      const t0 = Date.now();
      const started = performance.now();
      await request(base + inboundPath, 'POST', form.body, form.headers);
      await fakes.waitFor(from, t0);
      latencies.push(performance.now() - started);
    }
    latencies.sort((a, b) => a - b);
    out[target] = { live: now.live, heapPerSessionBytes: Math.round(perSession), continueP50Ms: Math.round(latencies[Math.floor(latencies.length / 2)] * 100) / 100 };
    process.stdout.write(`  ${now.live} live, ${Math.round(perSession)} B heap per Session, continue p50 ${latencies[Math.floor(latencies.length / 2)].toFixed(2)} ms\n`);
  }
  return out;
}

function report(rows: Record<string, any>): void {
  const ratio = (x: number, y: number) => Math.round((x / y) * 100) / 100;
  const table: Array<{ figure: string; value: number; target: string }> = [];
  if (rows.messaging) {
    table.push({ figure: 'messaging webhooks / baseline', value: ratio(rows.messaging.requestsPerSecond, rows.messaging.baselineRps), target: '>= 0.8' });
    table.push({ figure: 'messaging replies delivered / baseline', value: ratio(rows.messaging.repliesPerSecond, rows.messaging.baselineRps), target: '>= 0.5' });
  }
  if (rows.voice) table.push({ figure: 'voice next / baseline', value: ratio(rows.voice.requestsPerSecond, rows.voice.baselineRps), target: '>= 0.6' });
  if (rows.teamchat) {
    table.push({ figure: 'team-chat acks / baseline', value: ratio(rows.teamchat.requestsPerSecond, rows.teamchat.baselineRps), target: '>= 0.8' });
    table.push({ figure: 'team-chat replies delivered / baseline', value: ratio(rows.teamchat.repliesPerSecond, rows.teamchat.baselineRps), target: 'info' });
    table.push({ figure: 'team-chat acks / Bolt (acknowledging only)', value: ratio(rows.teamchat.requestsPerSecond, rows.bolt.requestsPerSecond), target: '>= 1.0' });
    table.push({ figure: 'team-chat acks / Bolt replying (the same job)', value: ratio(rows.teamchat.requestsPerSecond, rows.boltReplying.requestsPerSecond), target: 'info' });
    table.push({ figure: 'team-chat replies / Bolt replies (the same job)', value: ratio(rows.teamchat.repliesPerSecond, rows.boltReplying.repliesPerSecond), target: 'info' });
  }
  if (rows.scale) {
    const [small, large] = SCALE.map((n) => rows.scale[n] as { heapPerSessionBytes: number; continueP50Ms: number });
    table.push({ figure: `heap per waiting Session, ${SCALE[0]} -> ${SCALE[1]} (KB, variables included)`, value: Math.round(large.heapPerSessionBytes / 102.4) / 10, target: '<= 2' });
    table.push({ figure: `continue p50 at ${SCALE[1]} / at ${SCALE[0]}`, value: ratio(large.continueP50Ms, small.continueP50Ms), target: '<= 1.2' });
  }
  console.log('');
  console.table(table);
  const dir = join(REPO_ROOT, 'bench-results');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, quick ? 'quick.json' : 'full.json');
  writeFileSync(file, JSON.stringify({ when: new Date().toISOString(), quick, node: process.version, ratios: table, raw: rows }, null, 2));
  console.log(`written: ${file}`);
}

// bench/cluster.ts borrows the fakes and helpers above without running this benchmark.
if (require.main === module) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
