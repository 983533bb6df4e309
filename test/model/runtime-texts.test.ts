import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import should from 'should';

// The built package, as Node-RED loads it (the catalogs sit beside the node sets in dist/nodes/locales).
const { runtimeText } = require('../../../dist/model/texts.js');
const { StoreChooser } = require('../../../dist/stores/choose-store.js');
const { Environments } = require('../../../dist/engine/environments.js');

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
          const asked = [
            ...[...text.matchAll(/runtimeText\)?\([^,()]+(?:\([^()]*\))?,\s*'(\w+)',\s*'([\w.]+)'/g)].map((m) => [m[1], m[2]]),
            // The Session stores' `say` (model/texts.ts Say) speaks the core node set.
            ...[...text.matchAll(/\bsay\)?\(\s*'(runtime\.[\w.]+)'/g)].map((m) => ['core', m[1]]),
          ];
          for (const [set, key] of asked) {
            seen++;
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

/**
 * A runtime whose RED._ has a catalog in another language for a few core keys (Node-RED's i18n
 * with a French catalog installed), and whose log keeps what it is told.
 */
function frenchRuntime(userDir: string, french: Record<string, string>) {
  const lines: string[] = [];
  const keep = (level: string) => (line: string) => lines.push(`${level} ${line}`);
  const namespace = '@channel-sessions/node-red/channel-sessions-core:';
  const red = {
    settings: { userDir },
    log: { info: keep('info'), warn: keep('warn'), error: keep('error'), debug: () => undefined },
    _: (key: string, subs: Record<string, unknown> = {}) => {
      const text = key.startsWith(namespace) ? french[key.slice(namespace.length)] : undefined;
      return text === undefined ? key : text.replace(/__(\w+)__/g, (_whole, name: string) => String(subs[name]));
    },
  };
  return { red, lines };
}

describe('runtime texts in the runtime language', function () {
  let dir: string;
  const closing: Array<{ close(): Promise<void> }> = [];

  beforeEach(function () {
    dir = mkdtempSync(join(tmpdir(), 'cs-texts-'));
  });

  afterEach(async function () {
    for (const store of closing.splice(0)) await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a Session store says its log lines in the language of the runtime that made it', function () {
    const { red, lines } = frenchRuntime(dir, { 'runtime.log.store.started': 'Un nouveau magasin de Sessions est ouvert dans __path__.' });
    const { store } = new StoreChooser(red).choose(undefined, { context: {} });
    closing.push(store);
    should(lines).eql([`info [channel-sessions] Un nouveau magasin de Sessions est ouvert dans ${join(dir, 'channel-sessions.db')}.`]);
  });

  it("the engine's deploy warning about a Session store that is not durable is in the runtime's language", async function () {
    const { red, lines } = frenchRuntime(dir, {
      'runtime.log.environment': 'Environnement « __name__ » : __text__',
      'runtime.log.store.lossNotInSettings': "le magasin « __name__ » n'est pas dans contextStorage : un arrêt brutal perd les conversations en cours.",
    });
    const environments = new Environments(red, { note: () => undefined, restored: async () => undefined });
    const context = { keys: (_store: string, cb: (err: null, keys: string[]) => void) => cb(null, []) };
    environments.attach({ id: 'e1', name: 'Support', moduleKey: 'TeamChatModule', sessionStore: 'gone', maxSessions: 0, context });
    await environments.get('e1').ready;
    should(lines).eql([
      "warn [channel-sessions] Environnement « Support » : le magasin « gone » n'est pas dans contextStorage : un arrêt brutal perd les conversations en cours.",
    ]);
  });
});
