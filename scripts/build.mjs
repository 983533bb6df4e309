// Compiles src/ and assembles one folder Node-RED can load: each set's .js with its .html,
// locales/ and icons/ beside it (Node-RED only looks there). `--source-maps` (npm run coverage)
// adds .js.map files pointing back to src/; the build npm test, npm start and npm pack use has none.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
const nodesOut = join(dist, 'nodes');

rmSync(dist, { recursive: true, force: true });
const sourceMaps = process.argv.includes('--source-maps') ? ['--sourceMap'] : [];
execFileSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(root, 'tsconfig.json'), ...sourceMaps], { stdio: 'inherit' });
mkdirSync(nodesOut, { recursive: true });
for (const file of readdirSync(join(root, 'nodes'))) {
  if (file.endsWith('.html')) cpSync(join(root, 'nodes', file), join(nodesOut, file));
}
cpSync(join(root, 'locales'), join(nodesOut, 'locales'), { recursive: true });
if (existsSync(join(root, 'icons'))) cpSync(join(root, 'icons'), join(nodesOut, 'icons'), { recursive: true });
