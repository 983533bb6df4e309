import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { NodeRed } from './harness/node-red';
import { lookupPath } from '../src/engine/placeholders';

const TYPES = ['teamchat-environment', 'teamchat-start', 'teamchat-block-message', 'teamchat-notification', 'teamchat-post-message'];
const SET = '@channel-sessions/node-red/channel-sessions-teamchat';

/** What the editor loads for the team-chat node set: types, labels from the catalog, help for each node. */
describe('team chat: editor', () => {
  let red: NodeRed;
  let html: string;
  let catalog: Record<string, unknown>;

  before(async () => {
    red = await NodeRed.start();
    html = (await red.admin('GET', `/nodes/${SET}`, undefined, { Accept: 'text/html' })).text;
    catalog = (await red.admin('GET', `/locales/${SET}?lng=en-US`)).body;
  });
  after(async () => red?.close());

  it('registers every node type of the module, with no load error', async () => {
    const sets = (await red.admin('GET', '/nodes', undefined, { Accept: 'application/json' })).body as any[];
    const set = sets.find((s) => s.id === SET);
    assert.deepEqual(set.types, TYPES);
    assert.equal(set.err, undefined);
    for (const type of TYPES) {
      assert.match(html, new RegExp(`registerType\\('${type}'`), type);
      assert.match(html, new RegExp(`data-template-name="${type}"`), `${type} edit dialog`);
      assert.match(html, new RegExp(`data-help-name="${type}"`), `${type} help`);
    }
    assert.match(html, /const COLOR = '#d8c5e6'/);
  });

  it('every label the editor asks for is in the message catalog', () => {
    const keys = new Set<string>();
    for (const m of html.matchAll(/this\._\('([^']+)'/g)) keys.add(m[1]);
    for (const m of html.matchAll(/data-i18n="(?:\[[a-z]+\])?([^"]+)"/g)) keys.add(m[1]);
    assert.ok(keys.size > 40, `found ${keys.size} keys`);
    const missing = [...keys].filter((k) => typeof lookupPath(catalog, k) !== 'string');
    assert.deepEqual(missing, []);
  });

  // Token generation and the URLs the dialog shows are checked in a real browser (editor-browser.test.ts).
  it('keeps the bot token and signing secret in password fields and the token as visible text', () => {
    assert.match(html, /token: \{ type: 'text' \}/);
    assert.match(html, /botToken: \{ type: 'password'/);
    assert.match(html, /signingSecret: \{ type: 'password'/);
    assert.match(html, /id="teamchat-event-url"/);
    assert.match(html, /id="teamchat-start-url"/);
  });
});
