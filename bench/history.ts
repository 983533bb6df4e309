import { drive } from './load';
import { join } from 'node:path';
import { REPO_ROOT } from '../test/harness/node-red';
import type { DatabaseConstructor } from '../src/stores/sqlite/sqlite';
import { continueSamples, inboundSms, messageStatus, percentiles, userNumber, type MessagingTarget } from './messaging';
import { presigned } from './phases';
import type { Delivery } from './fake-apis';
import type { BenchRuntime, Bracketed } from './runtime';

/** Each group's users write from numbers of their own, to a number of its own. */
const SHORT = '+1563';
const LONG = '+1564';
const TO = '+15550000004';
/** Messages that bring a Session's history to its limit (each adds the user's line and the reply). */
const TO_LIMIT = 100;
/** The log's limit: each of those replies' `delivered` status is an entry. */
const LOG_LIMIT = 100;

export interface HistoryPhase {
  /** Mean history lines of each group's Sessions while measured. */
  lines: { short: number; long: number };
  short: Bracketed;
  long: Bracketed;
  continueShort: { p50: number; p90: number };
  continueLong: { p50: number; p90: number };
}

/**
 * Durable Sessions whose history holds a couple of lines against Sessions whose history is at its
 * limit (200 lines) and whose log is at its own (100 entries: the `delivered` status of each of
 * their replies, posted to the status route as the provider posts it), side by side in one runtime: the Node-RED CPU per message of each group (A B B
 * A between the same two baselines), then the latency of continuing one message at a time, the
 * two groups in turn, block by block. With the history inside the record, every step read and
 * wrote it whole; kept apart, a step should cost the same in both groups.
 */
export async function historyPhase(bench: BenchRuntime, target: MessagingTarget, longUsers: number, samples: number): Promise<HistoryPhase> {
  const { base } = bench;
  const shortUsers = bench.options.users;
  await bench.open(shortUsers, (i) => inboundSms(base, target, userNumber(SHORT, i), TO, 'open'));
  await bench.open(longUsers, (i) => inboundSms(base, target, userNumber(LONG, i), TO, 'open'));
  process.stdout.write(`… ${longUsers} Sessions brought to their history's limit (${longUsers * TO_LIMIT} messages)\n`);
  const since = Date.now();
  const grow = presigned(longUsers * TO_LIMIT, (i) => inboundSms(base, target, userNumber(LONG, i % longUsers), TO, `grow ${i}`));
  const grown = await drive(base, { amount: longUsers * TO_LIMIT, connections: Math.min(32, longUsers), next: grow });
  if (grown.non2xx || grown.errors) throw new Error(`growing histories: ${grown.non2xx} non-2xx answers, ${grown.errors} errors`);
  const replies = await repliesReached(bench, since, LONG, longUsers * TO_LIMIT);
  process.stdout.write(`… their logs brought to the limit (${replies.length} delivered statuses)\n`);
  const statuses = presigned(replies.length, (i) => messageStatus(base, target, replies[i].sid!, replies[i].to, replies[i].from!, 'delivered'));
  const posted = await drive(base, { amount: replies.length, connections: Math.min(32, longUsers), next: statuses });
  if (posted.non2xx || posted.errors) throw new Error(`posting statuses: ${posted.non2xx} non-2xx answers, ${posted.errors} errors`);
  await logsFull(bench, LONG);

  // Each half goes on where the group's last one stopped (a MessageSid sent again is a redelivery).
  const pool = bench.options.seconds * 4000;
  const requests = [SHORT, LONG].map((prefix, g) => {
    const users = g ? longUsers : shortUsers;
    const signed = presigned(pool, (i) => inboundSms(base, target, userNumber(prefix, i % users), TO, `hi ${i}`));
    let n = 0;
    return () => signed(n++);
  });
  const seconds = bench.options.seconds / 2;
  const order = [0, 1, 1, 0];
  const parts = await bench.around(async () => {
    const measured = [];
    for (const [n, g] of order.entries()) {
      const prefix = g ? LONG : SHORT;
      const label = `messaging inbound, durable, history ${g ? 200 : 'a few lines'} (${n < 2 ? 1 : 2} of 2)`;
      measured.push(await bench.measured(label, requests[g], { replies: (d) => d.to.startsWith(prefix), seconds }));
    }
    return measured;
  });
  const mean = (g: number): Bracketed => {
    const halves = parts.filter((_, n) => order[n] === g);
    const avg = (pick: (m: Bracketed) => number | undefined) => halves.reduce((sum, m) => sum + (pick(m) ?? 0), 0) / halves.length;
    return { ...halves[0], requestsPerSecond: avg((m) => m.requestsPerSecond), cpuPerRequestUs: avg((m) => m.cpuPerRequestUs), p50: avg((m) => m.p50) };
  };
  const sent = [0, 1].map((g) => parts.filter((_, n) => order[n] === g).reduce((sum, m) => sum + m.requests, 0));

  process.stdout.write(`… continue one message at a time, history a few lines / 200, in turn\n`);
  const latencies: number[][] = [[], []];
  const blocks = 10;
  for (let b = 0; b < blocks; b++) {
    for (const g of b % 2 ? [1, 0] : [0, 1]) {
      const prefix = g ? LONG : SHORT;
      latencies[g].push(...(await continueSamples(bench, target, prefix, TO, g ? longUsers : shortUsers, Math.ceil(samples / blocks), b ? 0 : 20)));
    }
  }
  const [continueShort, continueLong] = latencies.map(percentiles);
  process.stdout.write(`  p50 ${continueShort.p50} ms (a few lines), ${continueLong.p50} ms (200 lines)\n`);
  return {
    // Two lines at the opening, two more per message handled.
    lines: { short: Math.round(2 + (2 * sent[0]) / 2 / shortUsers), long: 200 },
    short: mean(0),
    long: mean(1),
    continueShort,
    continueLong,
  };
}

/** Waits until `count` replies to a prefix's users reached the fake API since `since` (the steps ran); returns them. */
async function repliesReached(bench: BenchRuntime, since: number, prefix: string, count: number): Promise<Delivery[]> {
  let got: Delivery[] = [];
  for (let i = 0; i < 600; i++) {
    got = (await bench.fakes.deliveredSince(since)).filter((d) => d.to.startsWith(prefix));
    if (got.length >= count) return got;
    await new Promise((r) => setTimeout(r, 1000));
  }
  throw new Error(`only ${got.length} of ${count} replies arrived`);
}

/**
 * Waits until every Session of a prefix's users has LOG_LIMIT log entries (their status steps ran),
 * counted in the durable store's file on a connection of the bench's own (it only reads: in WAL
 * mode a reader holds up no writer).
 */
async function logsFull(bench: BenchRuntime, prefix: string): Promise<void> {
  const { loadSqlite } = require(join(REPO_ROOT, 'dist', 'stores/sqlite/sqlite.js')) as { loadSqlite: () => DatabaseConstructor | string };
  const Database = loadSqlite();
  if (typeof Database === 'string') throw new Error(Database);
  const db = new Database(bench.databasePath);
  const short = db.prepare(
    'SELECT COUNT(*) AS n FROM sessions s WHERE s.conversation LIKE ? AND (SELECT COUNT(*) FROM session_log l WHERE l.session_id = s.id) < ?',
  );
  try {
    let n = -1;
    for (let i = 0; i < 600 && n !== 0; i++) {
      if (i) await new Promise((r) => setTimeout(r, 1000));
      n = Number(short.get(`${prefix}%`, LOG_LIMIT)?.n);
    }
    if (n !== 0) throw new Error(`${n} Sessions' logs did not reach ${LOG_LIMIT} entries`);
  } finally {
    db.close();
  }
}
