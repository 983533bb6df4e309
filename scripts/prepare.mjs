// npm runs `prepare` when the package is installed straight from git (it runs no other script
// there), and also at every `npm install`, `npm ci` and `npm pack` in this folder. It builds only
// when there is no build yet: a fresh clone gets one, and a build in use (a test run packing the
// package) is not pulled from under it. `npm start`, `npm test` and `npm pack` (prepack) build
// afresh themselves.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
if (!existsSync(join(root, 'dist', 'nodes'))) await import('./build.mjs');
