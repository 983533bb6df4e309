import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { freePort, request } from '../test/harness/node-red';
import { CREDS } from './flows';
import type { LoadRequest, LoadResult } from './load';
import { inboundSms, userNumber, type MessagingTarget } from './messaging';
import type { BenchRuntime, Bracketed, Measured } from './runtime';
import { slackHeaders, twilioForm } from './signing';

/** Per store for its unmeasured pass and its two halves (up to about 5,000 requests a second, 19 s with the warm-ups). */
const MESSAGING_POOL = 130000;

/**
 * Signed inbound SMS from `users` numbers of a prefix to a Process `sms start -> InputTask ->
 * OutputTask -> InputTask …`: every message continues a Session and sends a reply through the
 * `twilio` client to the fake API; a target with a `path` (the hand-rolled peer) does the same
 * job in a flow of core nodes. Each target first runs half a phase unmeasured (the runtime's
 * first replying seconds cost more, whichever serves them), then they are measured in the order
 * A B C C B A, each for half the phase, between the same two baselines, so a drift of the
 * machine falls on all alike.
 */
export async function messagingPhases(
  bench: BenchRuntime,
  stores: Array<{ target: MessagingTarget; prefix: string }>,
): Promise<Array<Bracketed & { parts: Measured[] }>> {
  const { base } = bench;
  const { users } = bench.options;
  // Each user's first message opens a Session (or the hand-rolled flow's conversation) and sends nothing: opened before the phases.
  for (const { target, prefix } of stores) {
    const first = (i: number) => inboundSms(base, target, userNumber(prefix, i), '+15550000000', 'open');
    if (target.path) await bench.sendAll(users, first);
    else await bench.open(users, first);
  }
  // Each half goes on where the store's last half stopped: a MessageSid sent again is a
  // redelivery, acknowledged and dropped by the store's dedupe, which would measure that instead.
  const requests = stores.map(({ target, prefix }) =>
    inOrder(presigned(MESSAGING_POOL, (i) => inboundSms(base, target, userNumber(prefix, i % users), '+15550000000', `hi ${i}`))),
  );
  const seconds = bench.options.seconds / 2;
  for (const [k, { target, prefix }] of stores.entries()) {
    await bench.unmeasured(`messaging inbound, ${target.label}`, requests[k], { replies: (d) => d.to.startsWith(prefix) });
  }
  const order = [...stores.keys(), ...[...stores.keys()].reverse()];
  const parts = await bench.around(async () => {
    const measured: Measured[] = [];
    for (const [n, k] of order.entries()) {
      const { target, prefix } = stores[k];
      const half = await bench.measured(`messaging inbound, ${target.label} (${n < stores.length ? 1 : 2} of 2)`, requests[k], {
        replies: (d) => d.to.startsWith(prefix),
        seconds,
      });
      // Every measured message continues a Session and is answered; fewer replies mean something else was measured.
      if ((half.repliesPerSecond ?? 0) < 0.9 * half.requestsPerSecond)
        process.stdout.write(`  WARNING: ${Math.round(half.repliesPerSecond ?? 0)} replies/s for ${Math.round(half.requestsPerSecond)} webhooks/s\n`);
      measured.push(half);
    }
    return measured;
  });
  return stores.map((_, k) => combined(parts.filter((__, n) => order[n] === k)));
}

/** Halves of one store's phase as one: rates and CPU averaged, the worse tail kept. */
function combined(halves: Bracketed[]): Bracketed & { parts: Measured[] } {
  const mean = (pick: (m: Bracketed) => number | undefined) => {
    const values = halves.map(pick).filter((v): v is number => v !== undefined);
    return values.length ? values.reduce((a, b) => a + b, 0) / values.length : undefined;
  };
  const [first] = halves;
  return {
    ...first,
    requestsPerSecond: mean((m) => m.requestsPerSecond)!,
    repliesPerSecond: mean((m) => m.repliesPerSecond),
    cpuPerRequestUs: mean((m) => m.cpuPerRequestUs),
    p50: mean((m) => m.p50)!,
    p99: Math.max(...halves.map((m) => m.p99)),
    requests: halves.reduce((sum, m) => sum + m.requests, 0),
    non2xx: halves.reduce((sum, m) => sum + m.non2xx, 0),
    errors: halves.reduce((sum, m) => sum + m.errors, 0),
    parts: halves,
  };
}

/** `calls` calls started, then signed `next` webhooks with a SpeechResult, each answered with Say + Gather. */
export async function voicePhase(bench: BenchRuntime, calls: number): Promise<Bracketed> {
  const { base } = bench;
  const startPath = `/api/TelcoModule/Voice/start/${CREDS.voiceToken}`;
  const nextPath = '/api/TelcoModule/Voice/next/envV';
  for (let c = 0; c < calls; c++) {
    const form = twilioForm(CREDS.authToken, base + startPath, callParams(c));
    await request(base + startPath, 'POST', form.body, form.headers);
  }
  const nextCalls = presigned(calls * 4, (i) => {
    const form = twilioForm(CREDS.authToken, base + nextPath, { ...callParams(i % calls), SpeechResult: `answer ${i}`, Confidence: '0.9' });
    return { method: 'POST', path: nextPath, headers: form.headers, body: form.body };
  });
  await bench.unmeasured('voice next (Say + Gather)', nextCalls);
  return bench.bracketed('voice next (Say + Gather)', nextCalls);
}

/** Signed `message.im` events from distinct users, each continuing a PerChannel Session that posts a reply; then Bolt, the peer (with `peers`). */
export async function teamchatPhase(
  bench: BenchRuntime,
  peers: boolean,
): Promise<{ teamchat: Bracketed; bolt?: LoadResult; boltReplying?: LoadResult & { repliesPerSecond: number } }> {
  const eventPath = `/TeamChat/event/${CREDS.teamchatToken}`;
  const events = signedEvents(bench.options.users, eventPath);
  // Each user's first message opens a Session and sends nothing: opened before the phase.
  await bench.open(bench.options.users, events);
  const replies = (d: { to: string }) => d.to.startsWith('D');
  await bench.unmeasured('team chat events', events, { replies });
  const teamchat = await bench.bracketed('team chat events', events, { replies });
  if (!peers) return { teamchat };
  const bolt = await boltPeer(bench, 'Slack Bolt HTTP receiver (peer, acknowledging only)', []);
  const replying = await boltPeer(bench, 'Slack Bolt app replying to each message (peer, the same job)', [bench.fakes.slackUrl]);
  return { teamchat, bolt, boltReplying: { ...replying, repliesPerSecond: await bench.deliveredRate(replying, replies) } };
}

async function boltPeer(bench: BenchRuntime, name: string, extraArgs: string[]): Promise<LoadResult> {
  const boltPort = await freePort();
  const bolt = spawn(process.execPath, [join(__dirname, 'bolt-peer.js'), String(boltPort), CREDS.signingSecret, ...extraArgs], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((r) => bolt.stdout?.on('data', (d: Buffer) => d.toString().includes('READY') && r()));
  const url = `http://127.0.0.1:${boltPort}`;
  try {
    // The peer's first seconds are not measured either, as ours are not.
    await bench.unmeasured(
      name,
      signedEvents(bench.options.users, '/slack/events'),
      extraArgs.length ? { url, replies: (d) => d.to.startsWith('D') } : { url },
    );
    return await bench.phase(name, signedEvents(bench.options.users, '/slack/events'), url);
  } finally {
    bolt.kill();
  }
}

function signedEvents(users: number, path: string): (i: number) => LoadRequest {
  return (i) => {
    const body = JSON.stringify({
      type: 'event_callback',
      team_id: 'TBENCH',
      api_app_id: 'ABENCH',
      event_id: `Ev${i.toString(36)}${Date.now().toString(36)}`,
      event_time: Math.floor(Date.now() / 1000),
      event: {
        type: 'message',
        channel_type: 'im',
        channel: `D${i % users}`,
        user: `U${i % users}`,
        text: `hi ${i}`,
        ts: `${Date.now() / 1000}${i}`,
        event_ts: `${Date.now() / 1000}`,
      },
    });
    return { method: 'POST', path, headers: slackHeaders(CREDS.signingSecret, body), body };
  };
}

function callParams(c: number): Record<string, string> {
  return {
    AccountSid: CREDS.accountSid,
    CallSid: `CA${c.toString(16).padStart(32, '0')}`,
    From: `+1666${c.toString().padStart(7, '0')}`,
    To: '+15550000001',
    Direction: 'inbound',
    CallStatus: 'in-progress',
  };
}

/** The next request of a pool at each call, whatever index the load generator asks for. */
function inOrder(pool: (i: number) => LoadRequest): (i: number) => LoadRequest {
  let n = 0;
  return () => pool(n++);
}

/** Signs requests before a run, so the load generator spends the run sending, not hashing. */
export function presigned(count: number, make: (i: number) => LoadRequest): (i: number) => LoadRequest {
  const pool = Array.from({ length: count }, (_, i) => make(i));
  return (i) => pool[i % count];
}
