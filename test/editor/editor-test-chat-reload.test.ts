import should from 'should';
import { Editor, NO_BROWSER, findChromium } from '../harness/browser';
import { TestChatPage, example, tabOf } from '../harness/test-chat-page';

const IVR = example('Phone IVR');
const SURVEY = example('SMS and WhatsApp survey');
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
  const chat = () => new TestChatPage(editor);
  const showChat = () => chat().show();
  const openFlowTab = (id: string) => chat().openFlowTab(id);
  const sessionId = () => chat().sessionId();
  const transcript = () => chat().transcript();
  const waitingAt = (node: string) => chat().waitingAt(node);
  const start = () => chat().start();
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
