// Prints the functions with the most self time in a .cpuprofile (node --cpu-prof output).
import { readFileSync } from 'node:fs';

const file = process.argv[2];
const limit = Number(process.argv[3] ?? 30);
const profile = JSON.parse(readFileSync(file, 'utf8'));
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const self = new Map();
const dt = profile.timeDeltas;
profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (dt[i] ?? 0)));
const total = [...self.values()].reduce((a, b) => a + b, 0);
const byFunction = new Map();
for (const [id, us] of self) {
  const { callFrame: f } = byId.get(id);
  const key = `${f.functionName || '(anonymous)'} ${f.url.replace(/^.*node_modules\//, '~/').replace(/^file:\/\/.*\/dist\//, 'dist/')}:${f.lineNumber + 1}`;
  byFunction.set(key, (byFunction.get(key) ?? 0) + us);
}
for (const [key, us] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, limit)) {
  console.log(`${((us / total) * 100).toFixed(1).padStart(5)}%  ${key}`);
}
