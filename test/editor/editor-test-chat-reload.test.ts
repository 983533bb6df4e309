import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import should from 'should';
import { Editor, NO_BROWSER, findChromium } from '../harness/browser';
import { REPO_ROOT, eventually } from '../harness/node-red';

// Code in page.evaluate runs in the browser; the tests compile without the DOM library.
declare const window: any;

type Flow = Array<Record<string, unknown> & { id: string; type: string }>;
const example = (name: string) => JSON.parse(readFileSync(join(REPO_ROOT, 'examples', `${name}.json`), 'utf8')) as Flow;
const IVR = example('Phone IVR');
const SURVEY = example('SMS and WhatsApp survey');
const tabOf = (flow: Flow) => flow.find((n) => n.type === 'tab')!.id;
const MENU = 'Say sales or support, or press 1 for sales, 2 for support, 3 to leave a voicemail.';

/**
 * The Test chat as a person uses it over an evening: the page is reloaded, Node-RED is restarted,
 * and the Phone IVR's conversation at its menu is still there and goes on.
 */
(findChromium() ? describe : describe.skip)(`the Test chat over reloads and restarts${findChromium() ? '' : ` (${NO_BROWSER})`}`, function () {
  this.timeout(120000);
  let editor: Editor;

  before(async function () {
    editor = await Editor.open({ width: 1366, height: 900 });
    await editor.red.deploy([...IVR, ...SURVEY]);
    await editor.load();
    await showChat();
  });
  after(async function () {
    await editor?.close();
  });

  const page = () => editor.page;
  const showChat = () => page().evaluate(() => window.RED.actions.invoke('channel-sessions:show-test-chat'));
  const openFlowTab = async (id: string) => {
    await page().evaluate((id) => window.RED.workspaces.show(id), id);
    await eventually(async () => (await page().inputValue('#cs-chat-process')) === id, 5000, `the Test chat on flow tab ${id}`);
  };
  const sessionId = () => page().getAttribute('#cs-chat-state', 'data-session');
  const transcript = () => page().$$eval('#cs-chat-transcript .cs-line .cs-bubble', (els) => els.map((e: any) => e.textContent.trim()));
  const waitingAt = (node: string) =>
    page()
      .waitForFunction((node) => window.$('#cs-chat-state').attr('data-state') === 'waiting' && window.$('#cs-chat-state').text().includes(node), node, {
        timeout: 15000,
      })
      .catch(async (err: Error) => {
        throw new Error(`${err.message}; the chat shows ${await page().textContent('#cs-chat-state')}: ${JSON.stringify(await transcript())}`);
      });
  const start = async () => {
    const before = await sessionId();
    await page().click('#cs-chat-start-session');
    await page().waitForFunction((before) => {
      const id = window.$('#cs-chat-state').attr('data-session');
      return id && id !== before;
    }, before);
  };
  const reload = async () => {
    await editor.load();
    await showChat();
  };

  it('shows the conversation so far after a reload of the editor, and takes the next answer', async function () {
    await openFlowTab(tabOf(IVR));
    await start();
    await waitingAt('Menu');
    const id = await sessionId();
    await reload();
    await openFlowTab(tabOf(IVR));
    await waitingAt('Menu');
    should(await sessionId()).equal(id);
    should(await transcript()).containEql(MENU);
    should(await page().textContent('#cs-chat-transcript')).not.match(/Press Start/);
    await page().screenshot({ path: '/tmp/chat-reload.png' });
    await page().click('#cs-chat-keypad [data-key="3"]');
    await page().click('#cs-chat-keypad [data-key="#"]');
    await waitingAt('Voicemail');
    should(await transcript()).containEql('Please leave a message after the beep. Press the pound key when you are done.');
    should(editor.takeErrors()).eql([]);
  });

  it('shows the conversation so far after a restart of Node-RED then a reload, and takes the next answer', async function () {
    await start();
    await waitingAt('Menu');
    const id = await sessionId();
    await editor.red.restart();
    await reload();
    await openFlowTab(tabOf(IVR));
    await waitingAt('Menu');
    should(await sessionId()).equal(id);
    should(await transcript()).containEql(MENU);
    await page().click('#cs-chat-keypad [data-key="3"]');
    await page().click('#cs-chat-keypad [data-key="#"]');
    await waitingAt('Voicemail');
    // The restart left the editor's failed reconnects in the console.
    editor.takeErrors();
  });
});
