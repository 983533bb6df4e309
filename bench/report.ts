import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../test/harness/node-red';
import type { HistoryPhase } from './history';
import type { ScalePoint, SideBySide } from './scale';

export interface Figure {
  figure: string;
  value: number | string;
  target: string;
}

const ratio = (x: number, y: number) => Math.round((x / y) * 100) / 100;
const kb = (bytes: number) => Math.round(bytes / 102.4) / 10;

/** The ratios with targets, from the raw rows of one run (the targets BENCHMARKS.md measures against). */
export function figures(rows: Record<string, any>): Figure[] {
  const table: Figure[] = [];
  /** A phase's rate against the baseline measured around it. */
  const vsBaseline = (row: { requestsPerSecond: number; baselineRps: number }) => row.requestsPerSecond / row.baselineRps;
  const repliesVsBaseline = (row: { repliesPerSecond: number; baselineRps: number }) => row.repliesPerSecond / row.baselineRps;
  if (rows.messaging) {
    table.push({
      figure: 'messaging webhooks / baseline (durable default)',
      value: ratio(rows.messaging.requestsPerSecond, rows.messaging.baselineRps),
      target: '>= 0.45',
    });
    table.push({
      figure: 'messaging replies delivered / baseline (durable default)',
      value: ratio(rows.messaging.repliesPerSecond, rows.messaging.baselineRps),
      target: '>= 0.5',
    });
  }
  if (rows.messaging && rows.messagingMemory) {
    table.push({
      figure: 'messaging webhooks/s, durable / in-memory',
      value: ratio(vsBaseline(rows.messaging), vsBaseline(rows.messagingMemory)),
      target: '>= 0.9',
    });
    table.push({
      figure: 'messaging replies/s, durable / in-memory',
      value: ratio(repliesVsBaseline(rows.messaging), repliesVsBaseline(rows.messagingMemory)),
      target: 'info',
    });
  }
  if (rows.messagingHandRolled) table.push(...handRolledFigures(rows));
  if (rows.voice) table.push({ figure: 'voice next / baseline', value: ratio(rows.voice.requestsPerSecond, rows.voice.baselineRps), target: '>= 0.45' });
  if (rows.callout) {
    table.push({ figure: 'calls placed per second at callsPerSecond 50', value: rows.callout.callsPerSecond, target: '>= 45' });
    table.push({ figure: 'Node-RED CPU per placed call, µs', value: rows.callout.cpuPerCallUs ?? 'n/a', target: 'info' });
  }
  if (rows.agent) {
    table.push({ figure: `AI agent turn, prompt in -> first token out, p50 ms (${rows.agent.calls} calls at once)`, value: rows.agent.p50, target: '<= 2' });
    table.push({ figure: `AI agent turn, prompt in -> first token out, p99 ms (${rows.agent.calls} calls at once)`, value: rows.agent.p99, target: '<= 10' });
  }
  if (rows.teamchat) {
    table.push({ figure: 'team-chat acks / baseline', value: ratio(rows.teamchat.requestsPerSecond, rows.teamchat.baselineRps), target: '>= 0.45' });
    table.push({ figure: 'team-chat replies delivered / baseline', value: ratio(rows.teamchat.repliesPerSecond, rows.teamchat.baselineRps), target: 'info' });
  }
  if (rows.teamchat && rows.bolt) {
    table.push({
      figure: 'team-chat acks / Bolt (acknowledging only)',
      value: ratio(rows.teamchat.requestsPerSecond, rows.bolt.requestsPerSecond),
      target: '>= 1.0',
    });
    table.push({
      figure: 'team-chat acks / Bolt replying (the same job)',
      value: ratio(rows.teamchat.requestsPerSecond, rows.boltReplying.requestsPerSecond),
      target: '>= 2.0',
    });
    table.push({
      figure: 'team-chat replies / Bolt replies (the same job)',
      value: ratio(rows.teamchat.repliesPerSecond, rows.boltReplying.repliesPerSecond),
      target: 'info',
    });
  }
  if (rows.messaging?.cpuPerRequestUs && rows.messaging?.baselineCpuPerRequestUs) {
    table.push({
      figure: 'messaging webhooks / baseline, per Node-RED CPU second (durable default)',
      value: ratio(rows.messaging.baselineCpuPerRequestUs, rows.messaging.cpuPerRequestUs),
      target: 'info',
    });
  }
  if (rows.messaging?.cpuPerRequestUs && rows.messagingMemory?.cpuPerRequestUs) {
    table.push({
      figure: 'messaging webhooks per Node-RED CPU second, durable / in-memory',
      value: ratio(rows.messagingMemory.cpuPerRequestUs, rows.messaging.cpuPerRequestUs),
      target: 'info',
    });
  }
  if (rows.history) {
    const h = rows.history as HistoryPhase;
    table.push({
      figure: `step CPU at history 200 / at history 2 (${Math.round(h.long.cpuPerRequestUs ?? 0)} / ${Math.round(h.short.cpuPerRequestUs ?? 0)} µs per message, durable; about ${h.lines.short} lines)`,
      value: ratio(h.long.cpuPerRequestUs ?? NaN, h.short.cpuPerRequestUs ?? NaN),
      target: '<= 1.15',
    });
    table.push({
      figure: `continue p50 at history 200 / at history 2 (${h.continueLong.p50} / ${h.continueShort.p50} ms, durable, side by side)`,
      value: ratio(h.continueLong.p50, h.continueShort.p50),
      target: '<= 1.15',
    });
  }
  if (rows.scale) table.push(...scaleFigures(rows.scale, 'durable', { heap: '<= 0.5', latency: 'info' }));
  if (rows.scaleSideBySide) {
    const { small, large } = rows.scaleSideBySide as SideBySide;
    table.push({
      figure: `continue p50 at ${large.sessions} / at ${small.sessions}, durable, measured side by side (${large.p50} / ${small.p50} ms)`,
      value: ratio(large.p50, small.p50),
      target: '<= 1.2',
    });
  }
  if (rows.scaleMemory) table.push(...scaleFigures(rows.scaleMemory, 'memory', { heap: 'info', latency: 'info' }));
  if (rows.messaging && rows.synchronousFull) {
    const full = rows.synchronousFull;
    table.push({
      figure: 'messaging webhooks/s, synchronous FULL / NORMAL',
      value: ratio(vsBaseline(full.messaging), vsBaseline(rows.messaging)),
      target: 'info',
    });
    table.push({
      figure: 'messaging replies/s, synchronous FULL / NORMAL',
      value: ratio(repliesVsBaseline(full.messaging), repliesVsBaseline(rows.messaging)),
      target: 'info',
    });
    if (rows.continueNormal && full.continue) {
      table.push({ figure: 'continue p50 ms, synchronous FULL vs NORMAL', value: `${full.continue.p50} vs ${rows.continueNormal.p50}`, target: 'info' });
    }
  }
  return table;
}

/** The hand-rolled flow (core nodes, state in flow context) beside the Sessions, measured in the same A B C C B A round. */
function handRolledFigures(rows: Record<string, any>): Figure[] {
  const hand = rows.messagingHandRolled;
  const us = (row: { cpuPerRequestUs?: number } | undefined) => (row?.cpuPerRequestUs === undefined ? 'n/a' : Math.round(row.cpuPerRequestUs));
  const table: Figure[] = [
    { figure: 'messaging / hand-rolled flow: webhooks / baseline', value: ratio(hand.requestsPerSecond, hand.baselineRps), target: 'info' },
    {
      figure: 'messaging / hand-rolled flow: Node-RED CPU µs per message, durable / in-memory / hand-rolled',
      value: `${us(rows.messaging)} / ${us(rows.messagingMemory)} / ${us(hand)}`,
      target: 'info',
    },
  ];
  for (const [name, row] of [
    ['durable', rows.messaging],
    ['in-memory', rows.messagingMemory],
  ] as const) {
    if (!row) continue;
    table.push({
      figure: `messaging / hand-rolled flow: webhooks/s, ${name} / hand-rolled`,
      value: ratio(row.requestsPerSecond, hand.requestsPerSecond),
      target: 'info',
    });
    table.push({
      figure: `messaging / hand-rolled flow: replies/s, ${name} / hand-rolled`,
      value: ratio(row.repliesPerSecond, hand.repliesPerSecond),
      target: 'info',
    });
    if (row.cpuPerRequestUs && hand.cpuPerRequestUs)
      table.push({
        figure: `messaging / hand-rolled flow: messages per Node-RED CPU second, ${name} / hand-rolled`,
        value: ratio(hand.cpuPerRequestUs, row.cpuPerRequestUs),
        target: 'info',
      });
  }
  return table;
}

/** Heap per waiting Session between each two points (a slope), and the latency at the last point against the first. */
function scaleFigures(points: Record<number, ScalePoint>, store: string, targets: { heap: string; latency: string }): Figure[] {
  const sorted = Object.values(points).sort((a, b) => a.sessions - b.sessions);
  const out: Figure[] = [];
  for (let i = 1; i < sorted.length; i++) {
    const [a, b] = [sorted[i - 1], sorted[i]];
    const how = b.how === 'seeded' ? 'written into the database, then a restart' : 'through webhooks';
    out.push({
      figure: `heap per waiting Session, ${store}, ${a.sessions} -> ${b.sessions} (KB, ${how})`,
      value: kb((b.heapUsed - a.heapUsed) / (b.live - a.live)),
      target: targets.heap,
    });
  }
  const [first, last] = [sorted[0], sorted[sorted.length - 1]];
  out.push({
    figure: `continue p50 at ${last.sessions} / at ${first.sessions}, ${store}, each at its point (${last.continueP50Ms} / ${first.continueP50Ms} ms)`,
    value: ratio(last.continueP50Ms, first.continueP50Ms),
    target: targets.latency,
  });
  if (first.databaseBytes !== undefined && last.databaseBytes !== undefined && store === 'durable') {
    out.push({
      figure: `database bytes per waiting Session, ${first.sessions} -> ${last.sessions}`,
      value: Math.round((last.databaseBytes - first.databaseBytes) / (last.sessions - first.sessions)),
      target: 'info',
    });
  }
  return out;
}

export function report(rows: Record<string, any>, quick: boolean): void {
  writeResults(quick ? 'quick' : 'full', figures(rows), rows, quick);
}

/** Prints the table of figures and writes it with the raw rows to bench-results/<name>.json. */
export function writeResults(name: string, table: unknown[], rows: unknown, quick: boolean): void {
  console.log('');
  console.table(table);
  const dir = join(REPO_ROOT, 'bench-results');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${name}.json`);
  writeFileSync(file, JSON.stringify({ when: new Date().toISOString(), quick, node: process.version, ratios: table, raw: rows }, null, 2));
  console.log(`written: ${file}`);
}
