// `npm test [-- <part of a file name> ...]`: compiles the tests and runs them against the build in
// dist/. Files written for mocha run under mocha (.mocharc.cjs: parallel, 2 jobs, spec reporter);
// files that still import from 'node:test' run under Node's own runner, until each is moved.
// Either runner failing fails the whole run.
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync, readdirSync, rmSync } from 'node:fs';
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
const usesNodeTest = (file) => /require\("node:test"\)/.test(readFileSync(file, 'utf8'));
const nodeTestFiles = files.filter(usesNodeTest);
const mochaFiles = files.filter((f) => !usesNodeTest(f));

let failed = false;
if (mochaFiles.length) {
  const mocha = require.resolve('mocha/bin/mocha.js');
  const result = spawnSync(process.execPath, [mocha, '--config', join(root, '.mocharc.cjs'), ...mochaFiles], { stdio: 'inherit', cwd: root });
  failed ||= result.status !== 0;
}
if (nodeTestFiles.length) {
  console.log(`\n${nodeTestFiles.length} file(s) still on node:test:`);
  const result = spawnSync(process.execPath, ['--test', '--test-concurrency=2', '--test-reporter=spec', ...nodeTestFiles], { stdio: 'inherit', cwd: root });
  failed ||= result.status !== 0;
}
process.exit(failed ? 1 : 0);
