import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import should from 'should';

// The built package, as Node-RED loads it (the catalogs sit beside the node sets in dist/nodes/locales).
const { runtimeText } = require('../../../dist/model/texts.js');

/**
 * Runtime texts (statuses, warnings, deploy log lines) go through the runtime's RED._ under their
 * node set's namespace, so a translated catalog changes them; where the runtime has no catalog
 * (node-red-node-test-helper's RED._ answers the key), the English one shipped with the nodes is used.
 */
describe('runtime texts', function () {
  it('asks RED._ with the node set namespace and the substitutions, and uses its answer', function () {
    const asked: Array<[string, unknown]> = [];
    const red = {
      _: (key: string, subs: unknown) => {
        asked.push([key, subs]);
        return `${(subs as { count: number }).count} en attente`;
      },
    };
    should(runtimeText(red, 'core', 'runtime.status.waiting', { count: 3 })).equal('3 en attente');
    should(asked).eql([['@channel-sessions/node-red/channel-sessions-core:runtime.status.waiting', { count: 3 }]]);
  });

  it('falls back to the English catalog, with its substitutions, when RED._ knows no such key', function () {
    const identity = { _: (key: string) => key };
    should(runtimeText(identity, 'core', 'runtime.status.notServing', { winner: 'Main', environment: 'Support' })).equal('not serving: "Main" serves Support');
    should(runtimeText(identity, 'core', 'runtime.environment.url', { what: 'Start', url: '/api/TelcoModule/Voice/start/t1' })).equal(
      'Start URL: /api/TelcoModule/Voice/start/t1',
    );
    should(runtimeText({ _: () => 'runtime.status.posted' }, 'teamchat', 'runtime.status.posted', { channel: 'C1' })).equal('posted to C1');
  });
});

describe('runtime text keys', function () {
  // A key missing from its catalog is shown to the user as the key itself ("runtime.status.queued"):
  // every key the built package asks for must be in the English catalog of the node set it names.
  it('every runtimeText key used in the package is in its node set catalog', function () {
    const root = join(__dirname, '..', '..', '..', 'dist');
    const catalogs: Record<string, unknown> = {};
    const missing: string[] = [];
    let seen = 0;
    const walk = (dir: string): void => {
      for (const name of readdirSync(dir)) {
        const path = join(dir, name);
        if (statSync(path).isDirectory()) walk(path);
        else if (name.endsWith('.js')) {
          const text = readFileSync(path, 'utf8');
          for (const m of text.matchAll(/runtimeText\)?\([^,()]+(?:\([^()]*\))?,\s*'(\w+)',\s*'([\w.]+)'/g)) {
            seen++;
            const [, set, key] = m;
            catalogs[set] ??= JSON.parse(readFileSync(join(root, 'nodes', 'locales', 'en-US', `${set}.json`), 'utf8'));
            const found = key.split('.').reduce<unknown>((at, part) => (at as Record<string, unknown> | undefined)?.[part], catalogs[set]);
            if (typeof found !== 'string') missing.push(`${set}:${key} (${path.slice(root.length + 1)})`);
          }
        }
      }
    };
    walk(root);
    should(seen).be.above(20);
    should(missing).eql([]);
  });
});
