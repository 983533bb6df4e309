// `npm test [-- <part of a file name> ...]`: compiles the tests and runs them against the build in
// dist/ under mocha (.mocharc.cjs: parallel, 2 jobs, spec reporter).
import { execFileSync, spawnSync } from 'node:child_process';
import { readdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
// CI runs the suite once per Node.js and Node-RED pair; the later runs reuse the compiled tests.
if (process.env.CS_TEST_COMPILED !== '1') {
  rmSync(join(root, '.test-build'), { recursive: true, force: true });
  execFileSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(root, 'test/tsconfig.json')], { stdio: 'inherit' });
}
const dir = join(root, '.test-build/test');
const only = process.argv.slice(2);
const files = readdirSync(dir, { recursive: true })
  .map(String)
  .filter((f) => f.endsWith('.test.js'))
  .filter((f) => !only.length || only.some((o) => f.includes(o)))
  .sort()
  .map((f) => join(dir, f));
if (!files.length) {
  console.error(`no test file matches ${only.join(', ')}`);
  process.exit(1);
}
const mocha = require.resolve('mocha/bin/mocha.js');
const result = spawnSync(process.execPath, [mocha, '--config', join(root, '.mocharc.cjs'), ...files], { stdio: 'inherit', cwd: root });
process.exit(result.status === 0 ? 0 : 1);
