// `npm run bench [-- --quick]`: compiles the harness and runs the benchmark (not part of npm test).
// `npm run bench -- --clients`: the CPU per reply of each provider client, default transport vs ours.
import { execFileSync, spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
execFileSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(root, 'bench/tsconfig.json')], { stdio: 'inherit' });
// `npm run bench -- --only=cluster`: one instance on Redis against one on the embedded store, two against one (bench/cluster.ts).
// `npm run bench -- --only=stream`: Stream reply, 20 answers at once in one workspace under Slack's tiers (bench/stream.ts).
// `npm run bench -- --compare=<git ref> [--rounds=2]`: the messaging rows of this build and of an earlier one, in one sitting (bench/compare.ts).
const compare = process.argv.some((a) => a.startsWith('--compare='));
const script = process.argv.includes('--clients')
  ? 'http-clients.js'
  : process.argv.includes('--only=cluster')
    ? 'cluster.js'
    : process.argv.includes('--only=stream')
      ? 'stream.js'
      : compare
        ? 'compare.js'
        : 'run.js';
const result = spawnSync(process.execPath, [join(root, '.test-build/bench', script), ...process.argv.slice(2)], { stdio: 'inherit', cwd: root });
process.exit(result.status ?? 1);
