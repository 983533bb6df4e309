import { agentPhase } from './agent';
import { calloutPhase } from './callout';
import { CREDS } from './flows';
import { HAND_ROLLED_PATH } from './hand-rolled-flow';
import { historyPhase } from './history';
import { continueLatency, inboundSms, userNumber, type MessagingTarget } from './messaging';
import { messagingPhases, teamchatPhase, voicePhase } from './phases';
import { RemoteFakes } from './remote-fakes';
import { report } from './report';
import { BenchRuntime, type BenchOptions } from './runtime';
import { durableScale, scaleThroughWebhooks } from './scale';

/**
 * `npm run bench`: Node-RED with the package, fake Slack and Twilio APIs on loopback, driven by
 * autocannon from this process with correctly signed requests from many distinct users. Every
 * figure is a ratio against a baseline measured in the same run on the same runtime. The durable
 * default store (SQLite) and the in-memory store are measured side by side on one runtime; a
 * second runtime measures the durable store with SQLite's synchronous=FULL.
 */
const quick = process.argv.includes('--quick') || process.env.npm_config_quick === 'true';
/** `--only=messaging,history,voice,callout`: run only these phases (the baseline always runs). */
const only = (process.argv.find((a) => a.startsWith('--only='))?.slice(7) ?? '').split(',').filter(Boolean);
const runs = (name: string) => !only.length || only.includes(name);
const options: BenchOptions = {
  seconds: quick ? 2 : 10,
  warmupSeconds: quick ? 1 : 2,
  connections: 32,
  users: quick ? 300 : 2000,
  bracket: !quick,
  profile: process.argv.includes('--cpu-prof') || process.env.npm_config_cpu_prof === 'true',
};
/** The durable store: points opened through webhooks, then the last point written into its database. */
const DURABLE_SCALE = quick ? { webhooks: [1000, 2000], seeded: 10000 } : { webhooks: [1000, 10000], seeded: 100000 };
/** The memory store, through webhooks only (it cannot be written before a start). */
const MEMORY_SCALE = [1000, 20000];
const LATENCY_SAMPLES = quick ? 100 : 1000;
const VOICE_CALLS = quick ? 100 : 500;
/** Calls out asked for at once (paced at 50 a second by their Environment). */
const CALLOUT_CALLS = quick ? 300 : 1000;
/** AI agent turn latency: calls at once, and the turns each takes one after the other. */
const AGENT_CALLS = 50;
const AGENT_TURNS = quick ? 20 : 100;
const DURABLE: MessagingTarget = { label: 'durable (SQLite)', token: CREDS.messagingToken, environment: 'envM' };
const MEMORY: MessagingTarget = { label: 'memory', token: CREDS.messagingMemoryToken, environment: 'envMm' };
/** The peer: the same job by hand with core nodes (bench/hand-rolled-flow.ts). */
const HAND_ROLLED: MessagingTarget = { label: 'hand-rolled flow', token: '', environment: '', path: HAND_ROLLED_PATH };
/** Each phase's users write from numbers of their own. */
const USERS = { durable: '+1555', memory: '+1556', handRolled: '+1557', latency: '+1559', scaleDurable: '+1777', scaleMemory: '+1778' };
/** Sessions opened for the latency of one message at a time (NORMAL vs FULL). */
const LATENCY_SESSIONS = quick ? 100 : 200;

async function main(): Promise<void> {
  const fakes = await RemoteFakes.start();
  const rows: Record<string, unknown> = {};
  try {
    const bench = await BenchRuntime.start(fakes, 'NORMAL', options);
    try {
      rows.baselines = bench.baselines;
      if (runs('messaging')) {
        [rows.messaging, rows.messagingMemory, rows.messagingHandRolled] = await messagingPhases(bench, [
          { target: DURABLE, prefix: USERS.durable },
          { target: MEMORY, prefix: USERS.memory },
          { target: HAND_ROLLED, prefix: USERS.handRolled },
        ]);
        rows.continueNormal = await oneAtATime(bench);
      }
      if (runs('history')) rows.history = await historyPhase(bench, DURABLE, quick ? 50 : 200, LATENCY_SAMPLES);
      if (runs('voice')) rows.voice = await voicePhase(bench, VOICE_CALLS);
      if (runs('callout')) rows.callout = await calloutPhase(bench, CALLOUT_CALLS);
      if (runs('agent')) rows.agent = await agentPhase(bench, AGENT_CALLS, AGENT_TURNS);
      // The Slack Bolt peers run in the full run only.
      if (runs('teamchat')) Object.assign(rows, await teamchatPhase(bench, !quick));
      // The memory store at scale is for comparison only: the full run measures it.
      if (runs('scale') && !quick) rows.scaleMemory = await scaleThroughWebhooks(bench, MEMORY, USERS.scaleMemory, MEMORY_SCALE, LATENCY_SAMPLES);
    } finally {
      await bench.close();
    }
    if (runs('scale')) {
      const durable = await durableScale(fakes, options, DURABLE, USERS.scaleDurable, DURABLE_SCALE.webhooks, DURABLE_SCALE.seeded, LATENCY_SAMPLES);
      rows.scale = durable.points;
      rows.scaleSideBySide = durable.sideBySide;
    }
    if (runs('synchronous')) {
      process.stdout.write('… a runtime of its own: the durable store with synchronous=FULL\n');
      const full = await BenchRuntime.start(fakes, 'FULL', options);
      try {
        const [messaging] = await messagingPhases(full, [{ target: DURABLE, prefix: USERS.durable }]);
        const latency = await oneAtATime(full);
        rows.synchronousFull = { baselines: full.baselines, messaging, continue: latency };
      } finally {
        await full.close();
      }
    }
  } finally {
    await fakes.stop();
  }
  report(rows, quick);
}

/** The latency of continuing a durable Session, one message at a time, on a runtime at rest. */
async function oneAtATime(bench: BenchRuntime): Promise<{ p50: number; p90: number }> {
  process.stdout.write(`… continue one message at a time, ${DURABLE.label}\n`);
  const to = '+15550000002';
  await bench.open(LATENCY_SESSIONS, (i) => inboundSms(bench.base, DURABLE, userNumber(USERS.latency, i), to, 'open'));
  const latency = await continueLatency(bench, DURABLE, USERS.latency, to, LATENCY_SESSIONS, LATENCY_SAMPLES);
  process.stdout.write(`  p50 ${latency.p50} ms, p90 ${latency.p90} ms\n`);
  return latency;
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
