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
