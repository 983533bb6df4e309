// Prints the functions with the most self time in a .cpuprofile (node --cpu-prof output).
// `--areas`: the self time summed by where the code lives (our store, our engine, Node's HTTP, …).
// `--stages`: each sample counted once, in the first stage of a message's path its stack reaches (the
// store, the provider API exchange, the signature, the engine and flow, the webhook in and its
// answer): what a message costs where, whoever calls whom. `--rate=<requests/s>` adds µs per request.
// `--phase=<part of a name>`: only the samples taken while the bench measured the phases so named
// (`--phase=messaging`, `--phase=memory`), from the phases-<pid>.json the bench writes beside it.
import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

const args = process.argv.slice(2);
const byArea = args.includes('--areas');
const byStage = args.includes('--stages');
const rate = Number(args.find((a) => a.startsWith('--rate='))?.slice(7) ?? 0);
const phase = args.find((a) => a.startsWith('--phase='))?.slice(8);
const [file, limitArg] = args.filter((a) => !a.startsWith('--'));
const limit = Number(limitArg ?? 30);
const profile = JSON.parse(readFileSync(file, 'utf8'));
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parentOf = new Map();
for (const n of profile.nodes) for (const child of n.children ?? []) parentOf.set(child, n.id);
const self = new Map();
const dt = profile.timeDeltas;
const inPhase = phaseFilter();
let at = profile.startTime;
profile.samples.forEach((id, i) => {
  at += dt[i] ?? 0;
  if (inPhase(at)) self.set(id, (self.get(id) ?? 0) + (dt[i] ?? 0));
});

/** Whether a sample taken at `t` (µs) falls in a measured phase whose name holds `--phase`. */
function phaseFilter() {
  if (!phase) return () => true;
  const pid = /\.(\d+)\.\d+\.\d+\.cpuprofile$/.exec(basename(file))?.[1];
  const windowsFile = join(dirname(file), `phases-${pid}.json`);
  if (!existsSync(windowsFile)) throw new Error(`--phase needs ${windowsFile} (written by npm run bench -- --cpu-prof)`);
  const windows = JSON.parse(readFileSync(windowsFile, 'utf8')).filter((w) => w.name.includes(phase));
  if (!windows.length) throw new Error(`no measured phase named like "${phase}" in ${windowsFile}`);
  console.log(`phases: ${windows.map((w) => w.name).join('; ')}`);
  return (t) => windows.some((w) => t >= w.startUs && t <= w.endUs);
}
const total = [...self.values()].reduce((a, b) => a + b, 0);

/** Where a frame's code lives; SQLite's own time counts in the store frame that called it. */
function area({ functionName, url }) {
  if (!url) return functionName.startsWith('(') ? functionName : `native: ${functionName || '(anonymous)'}`;
  if (/\/dist\/stores\//.test(url)) return 'our Session store (SQLite calls included)';
  if (/\/dist\//.test(url)) return `our code: ${url.replace(/^.*\/dist\//, '').split('/')[0]}`;
  const lib = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (lib) return `library: ${lib[1]}`;
  if (/^node:/.test(url)) return `Node.js: ${/^node:(?:internal\/)?(?:deps\/)?([^/:]+)/.exec(url)?.[1] ?? url}`;
  return url;
}

/**
 * The stages of a message's path, in the order a sample is tried against them: a sample belongs to
 * the first stage any frame of its stack is in. The provider exchange comes before the engine that
 * calls it, the store before the engine and routes that call it, and a socket write Node.js makes
 * for a client request (on a later tick, with none of our frames) still counts as the exchange.
 */
const STAGES = [
  ['idle', (f) => f.functionName === '(idle)'],
  ['garbage collection', (f) => f.functionName === '(garbage collector)'],
  ['Session store (SQLite included)', (f) => /\/dist\/stores\//.test(f.url)],
  [
    'provider API exchange (client side, socket writes included)',
    (f) =>
      /\/dist\/(messaging\/provider-client|telco\/twilio-http-client|http\/http-request|teamchat\/post-message)\.js/.test(f.url) ||
      /^node:_http_(client|agent)$/.test(f.url),
  ],
  ['webhook signature', (f) => /twilio\/lib\/webhooks\/|\/dist\/.*signature[^/]*\.js$/.test(f.url) || f.functionName === 'Hmac'],
  ['engine, Tasks and flow (Node-RED runtime included)', (f) => /\/dist\/(engine|tasks|kit|model)\/|@node-red\//.test(f.url)],
  ['webhook in and answer out (HTTP server, express, our routes)', (f) => /\/dist\/|^node:_http_|express|router/.test(f.url)],
];

/** The stage of a sample, from its whole stack. */
function stage(id) {
  const frames = [];
  for (let at = id; at !== undefined; at = parentOf.get(at)) frames.push(byId.get(at).callFrame);
  return STAGES.find(([, holds]) => frames.some(holds))?.[0] ?? 'other (Node.js internals, timers, microtasks)';
}

const sums = new Map();
for (const [id, us] of self) {
  const f = byId.get(id).callFrame;
  const key = byStage
    ? stage(id)
    : byArea
      ? area(f)
      : `${f.functionName || '(anonymous)'} ${f.url.replace(/^.*node_modules\//, '~/').replace(/^file:\/\/.*\/dist\//, 'dist/')}:${f.lineNumber + 1}`;
  sums.set(key, (sums.get(key) ?? 0) + us);
}
for (const [key, us] of [...sums].sort((a, b) => b[1] - a[1]).slice(0, limit)) {
  const perRequest = rate ? `${Math.round(((us / total) * 1e6) / rate)} µs/request  `.padStart(20) : '';
  console.log(`${((us / total) * 100).toFixed(1).padStart(5)}%  ${perRequest}${key}`);
}
