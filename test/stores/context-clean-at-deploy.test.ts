import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import should from 'should';
import { node, tab, uid, type FlowNode } from '../harness/flows';
import { NodeRed, eventually } from '../harness/node-red';
import { RedisServer, redisContextSettings } from '../harness/redis';

/** A route that answers `answer`: whether the deployed flows run. */
function route(path: string, answer: string): FlowNode[] {
  const z = uid('tab');
  return [
    tab(z),
    node('http in', `${z}-in`, z, { url: path, method: 'get' }, [[`${z}-fn`]]),
    node('function', `${z}-fn`, z, { func: `msg.payload = ${JSON.stringify(answer)}; return msg;`, outputs: 1 }, [[`${z}-out`]]),
    node('http response', `${z}-out`, z, {}),
  ];
}

/**
 * Node-RED asks every context store to drop the context of removed nodes after a deploy, and starts
 * the deployed flows only once each has answered: a store that cannot be reached then must not
 * leave every flow stopped. The deploy goes on, the log says what was not dropped, and it is
 * dropped after a later deploy.
 */
describe('context stores at a deploy when they cannot be reached', function () {
  this.timeout(60000);
  let red: NodeRed | undefined;
  let redis: RedisServer | undefined;
  let dir: string | undefined;
  afterEach(async function () {
    await red?.close();
    await redis?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
    red = redis = dir = undefined;
  });

  it('redis-context: a deploy while Redis is away starts the flows, says so without the password, and cleans at the next deploy', async function () {
    const password = 'ctx-clean-secret-7731';
    redis = await RedisServer.start({ password });
    red = await NodeRed.start({ settingsCode: redisContextSettings(redis.url) });
    const first = uid('tab');
    await red.deploy([
      tab(first),
      node('inject', `${first}-set`, first, { once: true, onceDelay: 0.1, repeat: '' }, [[`${first}-fn`]]),
      node('function', `${first}-fn`, first, { func: `flow.set('left', 1, 'shared', () => node.send(msg));`, outputs: 1 }, [[]]),
    ]);
    // The removed tab's context is in Redis, for the clean of a later deploy to drop.
    await eventually(async () => (await redis!.command('KEYS', '*')).includes(first), 10000, 'the flow context written');

    await redis.stop();
    await red.deploy(route('/ctx-clean/away', 'running'));
    const away = await red.request('GET', '/ctx-clean/away');
    should(away).containEql({ status: 200 });
    should(away.text).equal('running');
    const said = red.logs.join('\n');
    should(said).match(/context store redis-context: the context of nodes no longer deployed was not dropped after this deploy \(.+\); the flows start anyway/);
    should(said).not.containEql(password);

    await redis.start();
    await eventually(() => red!.logs.some((l) => /context store: Redis at .* is available again/.test(l)), 10000, 'the context store back');
    await red.deploy(route('/ctx-clean/back', 'back'));
    should((await red.request('GET', '/ctx-clean/back')).text).equal('back');
    should(await redis.command('KEYS', '*')).not.containEql(first);
  });

  it('sqlite-context: a deploy while its file cannot be opened starts the flows and says so', async function () {
    dir = mkdtempSync(join(tmpdir(), 'cs-ctx-clean-'));
    const missing = join(dir, 'not-yet', 'ctx.db');
    red = await NodeRed.start({
      settingsCode: `module.exports.contextStorage = {
  default: { module: 'memory' },
  durable: { module: require('@channel-sessions/node-red/sqlite-context'), config: { path: ${JSON.stringify(missing)} } },
};`,
    });
    await red.deploy(route('/ctx-clean/sqlite', 'running'));
    should((await red.request('GET', '/ctx-clean/sqlite')).text).equal('running');
    should(red.logs.join('\n')).match(
      /context store sqlite-context: the context of nodes no longer deployed was not dropped after this deploy \(.*not-yet.*\); the flows start anyway/,
    );
  });
});
