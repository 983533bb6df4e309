// Prints the functions with the most self time in a .cpuprofile (node --cpu-prof output).
// `--areas`: the self time summed by where the code lives (our store, our engine, Node's HTTP, …).
import { readFileSync } from 'node:fs';

const args = process.argv.slice(2);
const byArea = args.includes('--areas');
const [file, limitArg] = args.filter((a) => !a.startsWith('--'));
const limit = Number(limitArg ?? 30);
const profile = JSON.parse(readFileSync(file, 'utf8'));
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const self = new Map();
const dt = profile.timeDeltas;
profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (dt[i] ?? 0)));
const total = [...self.values()].reduce((a, b) => a + b, 0);

/** Where a frame's code lives; SQLite's own time counts in the store frame that called it. */
function area({ functionName, url }) {
  if (!url) return functionName.startsWith('(') ? functionName : `native: ${functionName || '(anonymous)'}`;
  if (/\/dist\/engine\/store\//.test(url)) return 'our Session store (SQLite calls included)';
  if (/\/dist\//.test(url)) return `our code: ${url.replace(/^.*\/dist\//, '').split('/')[0]}`;
  const lib = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (lib) return `library: ${lib[1]}`;
  if (/^node:/.test(url)) return `Node.js: ${/^node:(?:internal\/)?(?:deps\/)?([^/:]+)/.exec(url)?.[1] ?? url}`;
  return url;
}

const sums = new Map();
for (const [id, us] of self) {
  const f = byId.get(id).callFrame;
  const key = byArea ? area(f) : `${f.functionName || '(anonymous)'} ${f.url.replace(/^.*node_modules\//, '~/').replace(/^file:\/\/.*\/dist\//, 'dist/')}:${f.lineNumber + 1}`;
  sums.set(key, (sums.get(key) ?? 0) + us);
}
for (const [key, us] of [...sums].sort((a, b) => b[1] - a[1]).slice(0, limit)) {
  console.log(`${((us / total) * 100).toFixed(1).padStart(5)}%  ${key}`);
}
