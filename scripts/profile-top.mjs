// Prints the functions with the most self time in a .cpuprofile (node --cpu-prof output).
// `--areas`: the self time summed by where the code lives (our store, our engine, Node's HTTP, …).
// `--phase=<part of a name>`: only the samples taken while the bench measured the phases so named
// (`--phase=messaging`, `--phase=memory`), from the phases-<pid>.json the bench writes beside it.
import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

const args = process.argv.slice(2);
const byArea = args.includes('--areas');
const phase = args.find((a) => a.startsWith('--phase='))?.slice(8);
const [file, limitArg] = args.filter((a) => !a.startsWith('--'));
const limit = Number(limitArg ?? 30);
const profile = JSON.parse(readFileSync(file, 'utf8'));
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
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

const sums = new Map();
for (const [id, us] of self) {
  const f = byId.get(id).callFrame;
  const key = byArea
    ? area(f)
    : `${f.functionName || '(anonymous)'} ${f.url.replace(/^.*node_modules\//, '~/').replace(/^file:\/\/.*\/dist\//, 'dist/')}:${f.lineNumber + 1}`;
  sums.set(key, (sums.get(key) ?? 0) + us);
}
for (const [key, us] of [...sums].sort((a, b) => b[1] - a[1]).slice(0, limit)) {
  console.log(`${((us / total) * 100).toFixed(1).padStart(5)}%  ${key}`);
}
