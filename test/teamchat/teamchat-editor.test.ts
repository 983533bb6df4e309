import should from 'should';
import { NodeRed } from '../harness/node-red';
import { lookupPath } from '../../src/model/placeholders';

const TYPES = [
  'teamchat-environment',
  'teamchat-start',
  'teamchat-block-message',
  'teamchat-notification',
  'teamchat-open',
  'teamchat-status',
  'teamchat-stream',
  'teamchat-post-message',
];
const SET = '@channel-sessions/node-red/channel-sessions-teamchat';

/** What the editor loads for the team-chat node set: types, labels from the catalog, help for each node. */
describe('team chat: editor', function () {
  let red: NodeRed;
  let html: string;
  let catalog: Record<string, unknown>;

  before(async function () {
    red = await NodeRed.start();
    html = (await red.admin('GET', `/nodes/${SET}`, undefined, { Accept: 'text/html' })).text;
    catalog = (await red.admin('GET', `/locales/${SET}?lng=en-US`)).body;
  });
  after(async () => red?.close());

  it('registers every node type of the module, with no load error', async function () {
    const sets = (await red.admin('GET', '/nodes', undefined, { Accept: 'application/json' })).body as any[];
    const set = sets.find((s) => s.id === SET);
    should(set.types).eql(TYPES);
    should(set.err).equal(undefined);
    for (const type of TYPES) {
      should(html).match(new RegExp(`registerType\\('${type}'`), type);
      should(html).match(new RegExp(`data-template-name="${type}"`), `${type} edit dialog`);
      should(html).match(new RegExp(`data-help-name="${type}"`), `${type} help`);
    }
    should(html).match(/color: '#d8c5e6'/);
  });

  it('every label the editor asks for is in the message catalog', function () {
    const keys = new Set<string>();
    for (const m of html.matchAll(/this\._\('([^']+)'/g)) keys.add(m[1]);
    for (const m of html.matchAll(/data-i18n="(?:\[[a-z]+\])?([^"]+)"/g)) keys.add(m[1]);
    should(keys.size).be.above(40, `found ${keys.size} keys`);
    const missing = [...keys].filter((k) => typeof lookupPath(catalog, k) !== 'string');
    should(missing).eql([]);
  });

  // Token generation and the URLs the dialog shows are checked in a real browser (editor-browser.test.ts).
  it('keeps the bot token and signing secret in password fields and the token as visible text', function () {
    should(html).match(/token: \{ type: 'text' \}/);
    should(html).match(/botToken: \{ type: 'password'/);
    should(html).match(/signingSecret: \{ type: 'password'/);
    should(html).match(/id="teamchat-event-url"/);
    should(html).match(/id="teamchat-start-url"/);
  });
});
