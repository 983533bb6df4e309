// `npm start`: a development Node-RED on http://127.0.0.1:1880 with this package installed the way
// the palette would install it (a link in the user dir's node_modules), its examples under
// Import > Examples. Works offline: nothing is downloaded. The user dir is `.node-red/` (ignored by
// git); settings.js there is rewritten on each start, so put your own changes in
// `.node-red/settings.local.js` (module.exports = { ... }), which is merged over it.
import { spawn } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const userDir = join(root, '.node-red');
const port = Number(process.env.PORT) || 1880;

if (!existsSync(join(root, 'dist/nodes/core.js'))) {
  console.error('dist/ is missing: run `npm run build` first (npm start does it for you).');
  process.exit(1);
}

mkdirSync(join(userDir, 'node_modules', '@channel-sessions'), { recursive: true });
linkPackage(join(userDir, 'node_modules', '@channel-sessions', 'node-red'));
if (!existsSync(join(userDir, 'package.json'))) {
  writeFileSync(join(userDir, 'package.json'), JSON.stringify({ name: 'node-red-dev', private: true, dependencies: {} }, null, 2) + '\n');
}
writeFileSync(join(userDir, 'settings.js'), settingsFile());

const nodeRedDir = dirname(createRequire(join(root, 'package.json')).resolve('node-red/package.json'));
console.log(`Node-RED with @channel-sessions/node-red on http://127.0.0.1:${port}/ (user dir ${userDir})`);
const child = spawn(process.execPath, [join(nodeRedDir, 'red.js'), '--userDir', userDir, '--settings', join(userDir, 'settings.js')], {
  stdio: 'inherit',
  cwd: root,
});
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => process.exit(signal ? 0 : (code ?? 0)));

/** The package as the palette would install it: a link to this checkout, so `npm run build` is enough to pick up changes. */
function linkPackage(link) {
  try {
    const stat = lstatSync(link);
    if (stat.isSymbolicLink() && resolve(dirname(link), readlinkSync(link)) === root) return;
    rmSync(link, { recursive: true, force: true });
  } catch {
    // not there yet
  }
  symlinkSync(root, link, 'dir');
}

function settingsFile() {
  const settings = {
    uiHost: '127.0.0.1',
    uiPort: port,
    flowFile: 'flows.json',
    flowFilePretty: true,
    // A fixed secret for development only: credentials in .node-red/flows_cred.json stay readable
    // across restarts. Use your own secret (or none) in production.
    credentialSecret: 'channel-sessions-development-only',
    logging: { console: { level: 'info', metrics: false, audit: false } },
    editorTheme: { tours: false, projects: { enabled: false } },
    externalModules: { autoInstall: false },
    diagnostics: { enabled: false },
    telemetry: { enabled: false },
    channelSessions: {
      fileStorage: 'workspace',
      workspaceQuota: 500 * 1024 * 1024,
      idleTimeout: { TeamChatChannel: 86400, TelcoVoice: 7200, TelcoMessagingSms: 86400, TelcoMessagingMessenger: 86400, Chat: 3600 },
      sweepInterval: 5,
    },
  };
  return `// Written by scripts/start.mjs on every \`npm start\`; put your changes in settings.local.js.
const base = ${JSON.stringify(settings, null, 2)};
let local = {};
try { local = require('./settings.local.js'); } catch (err) { if (err.code !== 'MODULE_NOT_FOUND' || !String(err.message).includes('settings.local.js')) throw err; }
module.exports = { ...base, ...local, channelSessions: { ...base.channelSessions, ...(local.channelSessions || {}) } };
`;
}
