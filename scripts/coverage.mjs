// `npm run coverage [-- <part of a file name> ...]`: the suite under c8 (.c8rc.json), then line and
// branch coverage of src/. The build gets source maps for the run, so V8's coverage of dist/ (this
// process, mocha's workers and every Node-RED child, which inherit NODE_V8_COVERAGE) maps back to
// src/; dist/ is rebuilt without them afterwards, so nothing of it reaches a package.
import { execFileSync, spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const build = (...args) => execFileSync(process.execPath, [join(root, 'scripts/build.mjs'), ...args], { stdio: 'inherit', cwd: root });

build('--source-maps');
const c8 = require.resolve('c8/bin/c8.js');
const result = spawnSync(process.execPath, [c8, process.execPath, join(root, 'scripts/test.mjs'), ...process.argv.slice(2)], { stdio: 'inherit', cwd: root });
build();
process.exit(result.status ?? 1);
