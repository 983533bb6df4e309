// CI: the Flow Library's scorecard (`node-red-dev validate`, installed by .ci/run into
// .ci/node-red-dev/) on the package as npm packs it. Fails when a check fails, the tool stops, or
// it leaves a check out; D03 (a dependency has a newer major version than package.json allows) is
// only printed, so that a release elsewhere does not fail CI.
//
// The tool reads the Flow Library's catalogue (flows.nodered.org's catalogue.json) for P08 (a
// package of a similar name) and N01 (a node type another package also registers): CI reaches the
// npm registry and no other host, so that catalogue is answered as empty (.ci/scorecard-catalogue.cjs)
// and those two checks pass unseen. Everything else the tool reads from the package, or from the npm
// registry (P06, P07, D02, D03), as on the Flow Library.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const tool = join(root, '.ci/node-red-dev/node_modules/node-red-dev/bin/run');
if (!existsSync(tool)) {
  console.error(`node-red-dev is not installed at ${tool}`);
  process.exit(1);
}
const EXPECTED = ['P01', 'P03', 'P04', 'P05', 'P06', 'P07', 'P08', 'N01', 'N02', 'D01', 'D02', 'D03'];
const WARN_ONLY = new Set(['D03']);

// Outside the repository: the tool's dependency check would otherwise find the repository's
// node_modules above the package and read their versions as the package's.
const work = mkdtempSync(join(tmpdir(), 'cs-scorecard-'));
try {
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const packed = JSON.parse(execFileSync(npm, ['pack', '--json', '--pack-destination', work], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }));
  const pkg = join(work, 'package');
  execFileSync('tar', ['xzf', join(work, packed[0].filename), '-C', work]);
  const scorecard = join(work, 'scorecard.json');
  const run = spawnSync(process.execPath, ['-r', join(root, '.ci/scorecard-catalogue.cjs'), tool, 'validate', '-p', pkg, '-o', scorecard], {
    cwd: work,
    stdio: 'inherit',
    timeout: 300_000,
  });
  if (run.status !== 0 || !existsSync(scorecard)) {
    console.error(`node-red-dev validate stopped (exit ${run.status ?? run.signal}) without its scorecard`);
    process.exit(1);
  }
  const score = JSON.parse(readFileSync(scorecard, 'utf8'));
  const missing = EXPECTED.filter((check) => !score[check]);
  const failed = Object.entries(score).filter(([check, result]) => /^[PND]\d\d$/.test(check) && result.test === false);
  for (const [check, result] of failed.filter(([check]) => WARN_ONLY.has(check))) console.log(`scorecard: ${check} warns: ${JSON.stringify(result)}`);
  const failing = failed.filter(([check]) => !WARN_ONLY.has(check));
  if (missing.length || failing.length) {
    if (missing.length) console.error(`scorecard: no result for ${missing.join(', ')}`);
    for (const [check, result] of failing) console.error(`scorecard: ${check} failed: ${JSON.stringify(result)}`);
    process.exit(1);
  }
  console.log(`scorecard: ${EXPECTED.length} checks, none failed (P08 and N01 against an empty catalogue)`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
