// Compiles the tests and runs them with Node's test runner against the build in dist/.
import { execFileSync, spawnSync } from 'node:child_process';
import { readdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
rmSync(join(root, '.test-build'), { recursive: true, force: true });
execFileSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(root, 'test/tsconfig.json')], { stdio: 'inherit' });
const dir = join(root, '.test-build/test');
const only = process.argv.slice(2);
const files = readdirSync(dir, { recursive: true })
  .map(String)
  .filter((f) => f.endsWith('.test.js'))
  .filter((f) => !only.length || only.some((o) => f.includes(o)))
  .sort()
  .map((f) => join(dir, f));
const result = spawnSync(process.execPath, ['--test', '--test-concurrency=2', '--test-reporter=spec', ...files], { stdio: 'inherit', cwd: root });
process.exit(result.status ?? 1);
