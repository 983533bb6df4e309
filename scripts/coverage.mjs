// `npm run coverage [-- <part of a file name> ...]`: the suite under c8 (.c8rc.json), then line and
// branch coverage of src/. The build gets source maps for the run, so V8's coverage of dist/ (this
// process, mocha's workers and every Node-RED child, which inherit NODE_V8_COVERAGE) maps back to
// src/; dist/ is rebuilt without them afterwards, so nothing of it reaches a package.
import { execFileSync, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const build = (...args) => execFileSync(process.execPath, [join(root, 'scripts/build.mjs'), ...args], { stdio: 'inherit', cwd: root });

build('--source-maps');
// A module of types only compiles to no code; c8 would count its whole source as never run.
const noCode = /^"use strict";\s*Object\.defineProperty\(exports, "__esModule", \{ value: true \}\);\s*(\/\/# sourceMappingURL=\S+\s*)?$/;
const typeOnly = readdirSync(join(root, 'dist'), { recursive: true })
  .map(String)
  .filter((f) => f.endsWith('.js') && noCode.test(readFileSync(join(root, 'dist', f), 'utf8')))
  .map((f) => `--exclude=src/${f.replace(/\.js$/, '.ts')}`);
const c8 = require.resolve('c8/bin/c8.js');
const result = spawnSync(process.execPath, [c8, ...typeOnly, process.execPath, join(root, 'scripts/test.mjs'), ...process.argv.slice(2)], {
  stdio: 'inherit',
  cwd: root,
});
build();
process.exit(result.status ?? 1);
