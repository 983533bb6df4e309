import { request } from '../test/harness/node-red';
import { CREDS } from './flows';
import type { LoadRequest } from './load';
import type { BenchRuntime } from './runtime';
import { newMessageSid, twilioForm } from './signing';

/** One messaging Environment under benchmark: its webhook path and the numbers its users write from. */
export interface MessagingTarget {
  /** For the output: "durable (SQLite)", "memory". */
  label: string;
  token: string;
  /** The Environment node's id (its Sessions' `environment`). */
  environment: string;
  /** A flow of its own at this path, keeping no Sessions (the hand-rolled peer), in place of the Environment's webhook. */
  path?: string;
}

export function inboundPath(target: MessagingTarget): string {
  return target.path ?? `/api/TelcoModule/Messaging/inbound/${target.token}`;
}

/** A user's number: a prefix that keeps each phase's users apart, and the user's index. */
export function userNumber(prefix: string, n: number): string {
  return `${prefix}${n.toString().padStart(7, '0')}`;
}

/** A signed status callback of a message a Session sent (`to` the person, `from` our number), as Twilio posts it. */
export function messageStatus(base: string, target: MessagingTarget, sid: string, to: string, from: string, status: string): LoadRequest {
  const path = `/api/TelcoModule/Messaging/status/${target.token}`;
  const form = twilioForm(CREDS.authToken, base + path, { AccountSid: CREDS.accountSid, MessageSid: sid, MessageStatus: status, To: to, From: from });
  return { method: 'POST', path, headers: form.headers, body: form.body };
}

/** A signed inbound SMS from `from`, as Twilio posts it. */
export function inboundSms(base: string, target: MessagingTarget, from: string, to: string, body: string): LoadRequest {
  const path = inboundPath(target);
  const form = twilioForm(CREDS.authToken, base + path, {
    AccountSid: CREDS.accountSid,
    MessageSid: newMessageSid(),
    From: from,
    To: to,
    Body: body,
    NumMedia: '0',
  });
  return { method: 'POST', path, headers: form.headers, body: form.body };
}

/**
 * The p50 of continuing a waiting Session, one message at a time: from the POST until the reply
 * reaches the fake API, after an unmeasured warm-up. `users` users of `prefix` must each have a
 * Session waiting.
 */
export async function continueLatency(
  bench: BenchRuntime,
  target: MessagingTarget,
  prefix: string,
  to: string,
  users: number,
  samples: number,
): Promise<{ p50: number; p90: number }> {
  return percentiles(await continueSamples(bench, target, prefix, to, users, samples, Math.min(100, samples)));
}

/** Latencies (ms) of `samples` messages continuing random Sessions one at a time, after `warmup` unmeasured ones. */
export async function continueSamples(
  bench: BenchRuntime,
  target: MessagingTarget,
  prefix: string,
  to: string,
  users: number,
  samples: number,
  warmup: number,
): Promise<number[]> {
  const { base, fakes } = bench;
  const latencies: number[] = [];
  for (let k = -warmup; k < samples; k++) {
    const from = userNumber(prefix, Math.floor(Math.random() * users));
    const sms = inboundSms(base, target, from, to, `more ${k}`);
    const t0 = Date.now();
    const started = performance.now();
    const res = await request(base + sms.path, 'POST', sms.body, sms.headers);
    if (res.status !== 200) throw new Error(`continue answered ${res.status}: ${res.text}`);
    await fakes.waitFor(from, t0);
    if (k >= 0) latencies.push(performance.now() - started);
  }
  return latencies;
}

export function percentiles(latencies: number[]): { p50: number; p90: number } {
  const sorted = [...latencies].sort((a, b) => a - b);
  const at = (q: number) => Math.round(sorted[Math.floor(sorted.length * q)] * 100) / 100;
  return { p50: at(0.5), p90: at(0.9) };
}
