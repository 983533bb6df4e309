import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import should from 'should';
import { Editor, NO_BROWSER, findChromium } from '../harness/browser';
import { node, tab } from '../harness/flows';
import { REPO_ROOT, eventually } from '../harness/node-red';

// Code in page.evaluate runs in the browser; the tests compile without the DOM library.
declare const window: any;
declare const document: any;

const CORE = JSON.parse(readFileSync(join(REPO_ROOT, 'examples', 'Start here - the Test chat.json'), 'utf8')) as Array<{ id: string; type: string }>;
const CORE_PROCESS = CORE.find((n) => n.type === 'tab')!.id;
const LONG_NAME = 'Customer onboarding: collect the order number, the delivery address and a photo';
const FILE_NAME = 'résumé-файл.pdf';
const FILE_BYTES = Buffer.from('%PDF-1.4 a file with a non-Latin name');

/**
 * The Test chat and the Sessions view as a user on a laptop meets them: one click away beside
 * Debug, the Process picker on the open flow tab with its whole name, nothing carried from one
 * Session to the next, what the Process sends offered for download, and a Sessions view that
 * reads like Node-RED's Debug sidebar.
 */
(findChromium() ? describe : describe.skip)(`the Test chat and Sessions sidebar${findChromium() ? '' : ` (${NO_BROWSER})`}`, function () {
  this.timeout(120000);
  let editor: Editor;

  before(async function () {
    editor = await Editor.open({ width: 1366, height: 768 });
    await editor.red.deploy([
      ...CORE,
      tab('sbLong', LONG_NAME),
      node('session-start', 'sbLongStart', 'sbLong', { name: 'Start', testData: { text: 'hello' } }, [['sbLongAsk']]),
      node('input-task', 'sbLongAsk', 'sbLong', { prompt: 'Order number?', resultVariable: 'order', outputs: 2 }, [['sbLongEnd'], []]),
      node('end-task', 'sbLongEnd', 'sbLong'),
    ]);
    await editor.load();
  });
  after(async function () {
    await editor?.close();
  });

  const page = () => editor.page;
  const openFlowTab = (id: string) => page().evaluate((id) => window.RED.workspaces.show(id), id);
  const visible = (selector: string) => page().evaluate((s) => window.$(s).filter(':visible').length, selector);

  it("is one click away at 1366 px: its button shows beside Debug's, and the View menu opens either view", async function () {
    // Node-RED 4 draws a button per tab that fits; Node-RED 5 a button per tab with data-tab-id.
    const ours = '#red-ui-tab-channel-sessions-chat-link-button, [data-tab-id="channel-sessions-chat"]';
    const debug = '#red-ui-tab-debug-link-button, [data-tab-id="debug"]';
    should(await visible(ours)).be.aboveOrEqual(1, 'the Test chat button is in sight, not in the overflow menu');
    should(await visible(debug)).be.aboveOrEqual(1, 'Debug keeps its button');
    await page().locator(ours).filter({ visible: true }).first().click();
    await page().waitForSelector('#cs-chat-process', { state: 'visible' });
    const menu = await page().evaluate(() =>
      window
        .$('#menu-item-view-menu li, #menu-item-view-menu-submenu li')
        .map((_i: number, li: any) => li.textContent.trim())
        .get(),
    );
    should(menu).containEql('Test chat');
    should(menu).containEql('Sessions');
    await page().evaluate(() => window.RED.actions.invoke('channel-sessions:show-sessions'));
    await page().waitForSelector('#cs-sessions-list', { state: 'visible' });
    await page().evaluate(() => window.RED.actions.invoke('channel-sessions:show-test-chat'));
    await page().waitForSelector('#cs-chat-process', { state: 'visible' });
    should(editor.takeErrors()).eql([]);
  });

  it('picks the Process of the open flow tab, shows its whole name, and says what Start will do', async function () {
    await openFlowTab('sbLong');
    await eventually(async () => (await page().inputValue('#cs-chat-process')) === 'sbLong', 5000, 'the picker on the open flow tab');
    should(await page().getAttribute('#cs-chat-process', 'title')).equal(LONG_NAME);
    const widths = await page().evaluate(() => {
      const $ = window.$;
      return { select: $('#cs-chat-process').outerWidth(), sidebar: $('#red-ui-sidebar').width() };
    });
    should(widths.select).be.above(widths.sidebar * 0.7, "the picker takes the sidebar's width");
    should(await page().textContent('#cs-chat-transcript')).equal(`Press Start to run “${LONG_NAME}” with the test data above.`);
    await openFlowTab(CORE_PROCESS);
    await eventually(async () => (await page().inputValue('#cs-chat-process')) === CORE_PROCESS, 5000, 'the picker following the flow tab');
    should(await page().textContent('#cs-chat-transcript')).equal('Press Start to run “Start here: the Test chat” with the test data above.');
  });

  it('starts each Session with an empty composer: a file attached and not sent stays with the old one', async function () {
    await page().click('#cs-chat-start-session');
    await page().waitForSelector('#cs-chat-transcript .cs-kind-prompt');
    await page().setInputFiles('#cs-chat-file-input', [{ name: 'forgotten.txt', mimeType: 'text/plain', buffer: Buffer.from('not sent') }]);
    await page().fill('#cs-chat-input', 'not sent either');
    should(await page().textContent('#cs-chat-files')).match(/forgotten\.txt/);
    const first = await page().getAttribute('#cs-chat-state', 'data-session');
    await page().click('#cs-chat-start-session');
    await page().waitForFunction((previous) => {
      const state = window.$('#cs-chat-state');
      return state.attr('data-session') && state.attr('data-session') !== previous && state.attr('data-state') === 'waiting';
    }, first);
    should(await page().textContent('#cs-chat-files')).equal('');
    should(await page().inputValue('#cs-chat-input')).equal('');
  });

  it("says what to do when the files are more than Node-RED's apiMaxLength lets the editor send, and keeps the message", async function () {
    await page().click('#cs-chat-start-session');
    await page().waitForSelector('#cs-chat-transcript .cs-kind-prompt');
    // 4 MB grows to about 5.3 MB as base64: over the 5mb Node-RED sets by default.
    await page().setInputFiles('#cs-chat-file-input', [{ name: 'big.pdf', mimeType: 'application/pdf', buffer: Buffer.alloc(4 * 1024 * 1024, 7) }]);
    await page().fill('#cs-chat-input', 'with a big file');
    await page().click('#cs-chat-send');
    await page().waitForFunction(() => /apiMaxLength/.test(window.$('.red-ui-notification:visible').text()));
    should(await page().textContent('.red-ui-notification:visible')).match(
      /its files are more than Node-RED lets the editor send at once \(apiMaxLength in settings\.js, 5mb unless set; .*raise apiMaxLength and restart Node-RED/,
    );
    should(await page().textContent('#cs-chat-files')).match(/big\.pdf/);
    should(await page().inputValue('#cs-chat-input')).equal('with a big file');
    await page().evaluate(() => window.$('.red-ui-notification').hide());
    // The browser's own line for the refused request, and nothing else.
    should(editor.takeErrors()).eql(['Failed to load resource: the server responded with a status of 413 (Payload Too Large)']);
  });

  it('ends from its End button with "Ended from the Test chat"', async function () {
    await page().click('#cs-chat-end-session');
    await page().waitForSelector('#cs-chat-transcript .cs-kind-end');
    should(await page().textContent('#cs-chat-transcript .cs-kind-end')).match(/Ended from the Test chat in the editor/);
  });

  it('offers each file the Process sends as a download, name and bytes intact', async function () {
    await page().click('#cs-chat-start-session');
    await page().waitForFunction(
      () => !!document.querySelector('#cs-chat-transcript .cs-kind-prompt') && !document.querySelector('#cs-chat-transcript .cs-kind-end'),
    );
    await page().fill('#cs-chat-input', 'Ada');
    await page().press('#cs-chat-input', 'Enter');
    await page().waitForSelector('#cs-chat-transcript .cs-line:nth-child(5).cs-kind-prompt');
    // The lines shown stay the same elements while the conversation goes on (new ones are added):
    // a link or button is never replaced under a click.
    await page().evaluate(() =>
      document
        .querySelectorAll('#cs-chat-transcript .cs-line')
        .forEach((el: { setAttribute(name: string, value: string): void }) => el.setAttribute('data-shown-before', 'yes')),
    );
    await page().setInputFiles('#cs-chat-file-input', [{ name: FILE_NAME, mimeType: 'application/pdf', buffer: FILE_BYTES }]);
    await page().click('#cs-chat-send');
    await page().waitForSelector('#cs-chat-transcript .cs-kind-end');
    should(await page().locator('#cs-chat-transcript .cs-line[data-shown-before]').count()).equal(5);
    const link = page().locator('#cs-chat-transcript .cs-from-bot a.cs-download');
    should(await link.count()).equal(1);
    should(await link.textContent()).equal(FILE_NAME);
    const [download] = await Promise.all([page().waitForEvent('download'), link.click()]);
    should(download.suggestedFilename()).equal(FILE_NAME);
    const saved = readFileSync(await download.path());
    should(saved.equals(FILE_BYTES)).be.true();
    // The route itself: RFC 6266 names, behind the editor's permissions like the other admin routes.
    const href = (await link.getAttribute('href'))!;
    const res = await editor.red.admin('GET', `/${href}`);
    should(res.status).equal(200);
    should(res.headers.get('content-disposition')).equal(
      `attachment; filename="r?sum?-????.pdf"; filename*=UTF-8''r%C3%A9sum%C3%A9-%D1%84%D0%B0%D0%B9%D0%BB.pdf`,
    );
    should((await editor.red.admin('GET', '/channel-sessions/test-files/no-such-file')).status).equal(404);
    should(editor.takeErrors()).eql([]);
  });

  it('lists Sessions with their time, shows variables as the Debug sidebar does, and ends one without talk of tokens', async function () {
    await page().click('#cs-chat-start-session');
    await page().waitForFunction(
      () => !!document.querySelector('#cs-chat-transcript .cs-kind-prompt') && !document.querySelector('#cs-chat-transcript .cs-kind-end'),
    );
    await page().fill('#cs-chat-input', 'Grace');
    await page().press('#cs-chat-input', 'Enter');
    await page().waitForSelector('#cs-chat-transcript .cs-line:nth-child(5).cs-kind-prompt');
    const id = await page().getAttribute('#cs-chat-state', 'data-session');
    const mine = `#cs-sessions-list .cs-session[data-session-id="${id}"]`;
    await page().evaluate(() => window.RED.actions.invoke('channel-sessions:show-sessions'));
    // The list follows the Session's state (for a moment it may still say "running", or the wait before).
    await page().waitForFunction((s) => /^waiting at Ask for a file/.test(window.$(s).find('.cs-session-where').text()), mine);
    should(await page().textContent(`${mine} .cs-session-where`)).match(/^waiting at Ask for a file/);
    should(await page().textContent(`${mine} .cs-session-time`)).match(/\d{1,2}[:.]\d{2}/);
    await page().click(`${mine} .cs-session-head`);
    // The list is drawn again when a Session changes (an open detail is read again), so read the keys once they are all there.
    const keys = await page().waitForFunction((sel) => {
      const found = [...document.querySelectorAll(sel)].map((e: any) => e.textContent);
      return ['vars', 'execution', 'name'].every((k) => found.includes(k)) && found;
    }, `${mine} .cs-vars .red-ui-debug-msg-object-key`);
    should(await keys.jsonValue()).containDeep(['vars', 'execution', 'name']);
    const terms = await page().$$eval(`${mine} .cs-session-body dt`, (els) => els.map((e: any) => e.textContent));
    should(terms).containDeep(['Waits at', 'Started', 'Last activity', 'Variables']);
    // A redraw of the list leaves an open detail as the reader has it: the same element, not
    // emptied and read again (it blinked, and what the reader had unfolded folded up).
    await page().evaluate((sel) => {
      window.$(sel)[0].dataset.reader = 'here';
      window.csRedrawn = false;
      new window.MutationObserver(() => (window.csRedrawn = true)).observe(document.querySelector('#cs-sessions-list'), { childList: true });
    }, `${mine} .cs-session-body`);
    await page().click('#cs-sessions-refresh');
    await page().waitForFunction(() => window.csRedrawn === true);
    should(await page().getAttribute(`${mine} .cs-session-body`, 'data-reader')).equal('here');
    should(await page().$$eval(`${mine} .cs-session-body dt`, (els) => els.length)).be.above(3);
    await page().click(`${mine} .cs-session-end`);
    const confirm = await page().textContent('.red-ui-notification:visible');
    should(confirm).match(/End this Session\?/);
    should(confirm).not.match(/token/i);
    await page().click('.red-ui-notification button.cs-confirm-end');
    await page().waitForSelector(mine, { state: 'detached' });
    await page().check('#cs-sessions-ended');
    // It stays open as it was: its detail now says how it ended.
    await page().waitForSelector(`${mine} .cs-session-body dt`);
    const ended = await page().$$eval(`${mine} .cs-session-body dt`, (els) => els.map((e: any) => e.textContent));
    should(ended).not.containEql('Waits at');
    should(ended.some((t) => t === 'Ended before its EndTask' || t === 'Completed (reached its EndTask)')).be.true(ended.join(', '));
    should(editor.takeErrors()).eql([]);
  });
});
