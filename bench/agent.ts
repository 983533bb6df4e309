import { performance } from 'node:perf_hooks';
import { request } from '../test/harness/node-red';
import { FakeConversationRelay } from '../test/fakes/conversation-relay';
import { CREDS } from './flows';
import type { BenchRuntime } from './runtime';
import { twilioForm } from './signing';

/** Mean pause between a call's answer and its next turn (a caller talks far slower; this keeps the phase short). */
const THINK_MS = 100;

export interface AgentLatency {
  calls: number;
  turns: number;
  /** Milliseconds from a `prompt` frame sent to the first `text` frame back, over loopback. */
  p50: number;
  p99: number;
  max: number;
}

/**
 * Turn latency of the AI agent inside Node-RED: `calls` calls are answered with a ConversationRelay
 * whose flow answers each turn at once (AI agent output 3 -> Agent say), each relay WebSocket opened
 * as the provider opens it (signed upgrade), and every call then takes `turns` turns one after
 * the other, about 100 ms apart, all calls at the same time (some 500 turns a second in all). Measured from the `prompt` frame sent to the first `text`
 * frame received, on loopback: an upper bound of the time inside Node-RED.
 */
export async function agentPhase(bench: BenchRuntime, calls: number, turns: number): Promise<AgentLatency> {
  process.stdout.write(`… AI agent turns, ${calls} calls at once, ${turns} turns each\n`);
  const { base } = bench;
  const startPath = `/api/TelcoModule/Voice/start/${CREDS.agentToken}`;
  const relays: FakeConversationRelay[] = [];
  try {
    for (let c = 0; c < calls; c++) {
      const params = {
        AccountSid: CREDS.accountSid,
        CallSid: `CA${(0xa9e000 + c).toString(16).padStart(32, '0')}`,
        From: `+1667${String(c).padStart(7, '0')}`,
        To: '+15550000003',
        Direction: 'inbound',
        CallStatus: 'ringing',
      };
      const form = twilioForm(CREDS.authToken, base + startPath, params);
      const answer = await request(base + startPath, 'POST', form.body, form.headers);
      const url = /<ConversationRelay url="([^"]+)"/.exec(answer.text)?.[1]?.replace(/&amp;/g, '&');
      if (!url) throw new Error(`the AI agent did not answer a ConversationRelay: ${answer.status} ${answer.text}`);
      relays.push(await FakeConversationRelay.connect(base, url, { signingKey: CREDS.authToken }));
    }
    const talk = async (relay: FakeConversationRelay, count: number, latencies?: number[]) => {
      for (let t = 0; t < count; t++) {
        // A caller speaks, hears the answer, and speaks again: the calls' turns interleave rather than queue.
        await new Promise((r) => setTimeout(r, THINK_MS / 2 + Math.random() * THINK_MS));
        const before = relay.received.length;
        const sent = performance.now();
        relay.prompt(`turn ${t}`);
        await relay.frames(before + 1, 10000);
        latencies?.push(performance.now() - sent);
      }
    };
    // Warm-up: code paths compiled, sockets settled.
    await Promise.all(relays.map((r) => talk(r, 5)));
    const latencies: number[] = [];
    await Promise.all(relays.map((r) => talk(r, turns, latencies)));
    latencies.sort((a, b) => a - b);
    const at = (q: number) => Math.round(latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] * 100) / 100;
    const result = { calls, turns: latencies.length, p50: at(0.5), p99: at(0.99), max: at(1) };
    process.stdout.write(`  p50 ${result.p50} ms, p99 ${result.p99} ms, max ${result.max} ms over ${result.turns} turns\n`);
    return result;
  } finally {
    await Promise.all(relays.map((r) => r.close()));
  }
}
