import should from 'should';
import { Editor, NO_BROWSER, findChromium } from '../harness/browser';
import { chain, tab } from '../harness/flows';
import { eventually } from '../harness/node-red';
import { TestChatPage } from '../harness/test-chat-page';
import { modelInParts } from '../harness/model-parts';

// Code in page.evaluate runs in the browser; the tests compile without the DOM library.
declare const window: any;

const PARTS = ['Rates ', 'are *4.5%* ', 'this week', ', fixed for ', '12 months', '. Anything else?'];

/** A model writing its answer in parts, one every 400 ms (`msg.partial` on all but the last). */
const MODEL = modelInParts(JSON.stringify(PARTS), 400);

/**
 * Stream reply in the Test chat, as a person sees it: the answer grows in one bubble while the
 * model writes it, then Slack's feedback buttons stand under the finished answer, and a click on
 * one answers the waiting InputTask as a click in Slack does.
 */
(findChromium() ? describe : describe.skip)(`the Test chat showing a streamed answer${findChromium() ? '' : ` (${NO_BROWSER})`}`, function () {
  this.timeout(90000);
  let editor: Editor;

  before(async function () {
    editor = await Editor.open({ width: 1366, height: 900 });
    await editor.red.deploy([
      tab('tcsTab', 'Streamed answer'),
      ...chain('tcsTab', [
        ['session-start', 'tcsStart', { name: 'Start', testData: { text: 'rates?' } }],
        ['function', 'tcsModel', { name: 'Model', func: MODEL, outputs: 1 }],
        ['teamchat-stream', 'tcsStream', { name: 'Answer', feedback: true }],
        ['input-task', 'tcsRate', { name: 'Rate it', prompt: '', resultVariable: 'rating' }],
        ['output-task', 'tcsThanks', { text: 'Rated {rating}' }],
        ['end-task', 'tcsEnd'],
      ]),
    ]);
    await editor.load();
    await editor.page.evaluate(() => window.RED.actions.invoke('channel-sessions:show-test-chat'));
  });
  after(async function () {
    await editor?.close();
  });

  it('grows the answer in one bubble, then draws the feedback buttons whose click answers the InputTask', async function () {
    const page = editor.page;
    const chat = new TestChatPage(editor);
    await chat.openFlowTab('tcsTab');
    // Every text the answer's bubble shows, and how many bot bubbles there were then.
    await page.evaluate(() => {
      window.__seen = [];
      const box = window.document.getElementById('cs-chat-transcript');
      new window.MutationObserver(() => {
        const bot = window.$('#cs-chat-transcript .cs-line.cs-from-bot');
        const draft = window.$('#cs-chat-transcript .cs-draft .cs-bubble');
        if (draft.length) window.__seen.push({ text: draft.text(), bubbles: bot.length, drafts: draft.length });
      }).observe(box, { childList: true, subtree: true, characterData: true });
    });
    await chat.start();
    await chat.waitingAt('Rate it');
    const whole = PARTS.join('');
    const seen: Array<{ text: string; bubbles: number; drafts: number }> = await page.evaluate(() => window.__seen);
    const texts = [...new Set(seen.map((s) => s.text))];
    // The answer grew: several texts, each a beginning of the next, in one bubble (the only bot bubble then).
    should(texts.length).be.aboveOrEqual(2, JSON.stringify(seen));
    for (let i = 1; i < texts.length; i++) should(texts[i].startsWith(texts[i - 1])).be.true(JSON.stringify(texts));
    for (const t of texts) should(whole.startsWith(t)).be.true(t);
    should(seen.every((s) => s.bubbles === 1 && s.drafts === 1)).be.true(JSON.stringify(seen));
    // Finished: one bubble with the whole answer, no draft left, and the two feedback buttons under it.
    should(await page.locator('#cs-chat-transcript .cs-draft').count()).equal(0);
    const answer = page.locator('#cs-chat-transcript .cs-line.cs-from-bot');
    should(await answer.count()).equal(1);
    should((await answer.locator('.cs-bubble .cs-text').textContent())?.trim()).equal(whole);
    const buttons = answer.locator('.cs-feedback .cs-feedback-button');
    should(await buttons.count()).equal(2);
    should(await buttons.evaluateAll((els) => els.map((e: any) => [e.dataset.value, e.getAttribute('aria-label'), e.disabled]))).eql([
      ['positive', 'Mark this answer as good', false],
      ['negative', 'Mark this answer as bad', false],
    ]);
    await page.locator('#cs-chat-transcript').screenshot({ path: '/tmp/stream-shots/cs-stream-feedback.png' });

    const id = await chat.sessionId();
    await page.click('#cs-chat-transcript .cs-feedback-button[data-value="negative"]');
    await page.waitForFunction(() =>
      window
        .$('#cs-chat-transcript .cs-bubble')
        .toArray()
        .some((e: any) => e.textContent.trim() === 'Rated negative'),
    );
    const session = await eventually(
      async () => {
        const s = (await editor.red.admin('GET', `/channel-sessions/sessions/${id}`)).body;
        return s.state === 'completed' ? s : undefined;
      },
      10000,
      'the Session to complete',
    );
    should(session.vars.rating).equal('negative');
    should(session.vars.rating_action).containEql({ action_id: 'feedback', value: 'negative' });
    // The history records the answer once.
    should(session.history.filter((h: any) => h.from === 'bot').map((h: any) => h.text)).eql([whole, 'Rated negative']);
    should(editor.takeErrors()).eql([]);
  });
});
