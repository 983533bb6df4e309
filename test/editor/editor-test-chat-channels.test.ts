import should from 'should';
import { Editor, NO_BROWSER, findChromium } from '../harness/browser';
import { chain, tab } from '../harness/flows';
import { eventually } from '../harness/node-red';
import { TestChatPage, example, idOf, tabOf } from '../harness/test-chat-page';

// Code in page.evaluate runs in the browser; the tests compile without the DOM library.
declare const window: any;

const SURVEY = example('SMS and WhatsApp survey');
const HELP_DESK = example('Slack help-desk bot');
const IVR = example('Phone IVR');
const DELIVERY = example('Delivery notice over SMS and WhatsApp');

/**
 * The Test chat plays the Channel of the start picked, in a real editor against a real Node-RED
 * whose Environments have no credentials: an SMS start takes the SMS branch, a WhatsApp button and
 * a Slack block message button are clicked, digits are pressed on a call's keypad; Restart ends the
 * Session it replaces; the chat follows the open flow tab; a test Session survives a restart of
 * Node-RED in the middle of its conversation.
 */
(findChromium() ? describe : describe.skip)(`the Test chat playing each Channel${findChromium() ? '' : ` (${NO_BROWSER})`}`, function () {
  this.timeout(120000);
  let editor: Editor;

  before(async function () {
    editor = await Editor.open({ width: 1366, height: 900 });
    await editor.red.deploy([
      ...SURVEY,
      ...HELP_DESK,
      ...IVR,
      ...DELIVERY,
      tab('tcbRestart', 'Ask a name'),
      ...chain('tcbRestart', [
        ['session-start', 'tcbStart', { name: 'Start', testData: { text: 'hi' } }],
        ['input-task', 'tcbAsk', { name: 'Ask name', prompt: 'Your name?', resultVariable: 'name' }],
        ['output-task', 'tcbOut', { text: 'Hello {name}' }],
        ['end-task', 'tcbEnd'],
      ]),
      tab('tcbSlow', 'Thank slowly'),
      ...chain('tcbSlow', [
        ['session-start', 'tcbSlowStart', { name: 'Start', testData: { text: 'hi' } }],
        ['input-task', 'tcbSlowAsk', { name: 'Ask order', prompt: 'Your order?', resultVariable: 'order' }],
        // The step goes on for a second after the answer, so a read of the Session meanwhile is of the middle of it.
        ['delay', 'tcbSlowDelay', { pauseType: 'delay', timeout: '1', timeoutUnits: 'seconds' }],
        ['output-task', 'tcbSlowOut', { text: 'Thanks for order {order}' }],
        ['end-task', 'tcbSlowEnd'],
      ]),
    ]);
    await editor.load();
    await page().evaluate(() => window.RED.actions.invoke('channel-sessions:show-test-chat'));
  });
  after(async function () {
    await editor?.close();
  });

  const page = () => editor.page;
  const chat = () => new TestChatPage(editor);
  const openFlowTab = (id: string) => chat().openFlowTab(id);
  const sessionId = () => chat().sessionId();
  const waitingAt = (node: string) => chat().waitingAt(node);
  const restart = () => chat().start();
  const transcript = () => chat().transcript();
  const stateOf = async (id: string) => (await editor.red.admin('GET', `/channel-sessions/sessions/${id}`)).body;

  it("runs the survey's SMS start on SMS: the SMS branch, marked as simulated", async function () {
    await openFlowTab(tabOf(SURVEY));
    await page().selectOption('#cs-chat-start', idOf(SURVEY, 'telco-sms-start'));
    should(await page().inputValue('#cs-chat-mode')).equal('channel', 'a channel start plays its Channel by default');
    should(await page().textContent('#cs-chat-mode option[value="channel"]')).equal('SMS (simulated)');
    await restart();
    await waitingAt('Recommend? (text)');
    should(await transcript()).containEql('Would you recommend us? Reply YES or NO.');
    should(await page().textContent('#cs-chat-simulated')).match(/^Simulating SMS: .*nothing is sent to the provider/);
    should(await page().textContent('#cs-chat-transcript .cs-kind-prompt .cs-tag')).match(/^SMS · simulated/);
    // Chat stays a choice: the plain Chat Channel takes the other branch, as before.
    await page().selectOption('#cs-chat-mode', 'chat');
    await restart();
    await waitingAt('Recommend? (buttons)');
    should(await page().locator('#cs-chat-simulated').count()).equal(0);
    should(editor.takeErrors()).eql([]);
  });

  it("shows the WhatsApp start's buttons as buttons, and a click answers with the tapped button", async function () {
    await page().selectOption('#cs-chat-start', idOf(SURVEY, 'telco-messenger-start'));
    await page().selectOption('#cs-chat-mode', 'channel');
    await restart();
    await waitingAt('Recommend? (buttons)');
    const labels = await page().$$eval('#cs-chat-transcript .cs-tap-button', (els) => els.map((e: any) => e.textContent.trim()));
    should(labels).eql(['Yes', 'No']);
    await page().locator('#cs-chat-transcript .cs-tap-button', { hasText: 'Yes' }).click();
    await waitingAt('Feedback');
    const s = await stateOf((await sessionId())!);
    should(s.vars.choice).eql({ payload: 'Yes', text: 'Yes', message: 'Yes', tapped: true });
    should(s.vars.recommend).equal('Yes');
    should(editor.takeErrors()).eql([]);
  });

  it("plays Text out on the Channel its test data's addresses say: whatsapp: ones show the WhatsApp buttons", async function () {
    await openFlowTab(tabOf(DELIVERY));
    should(await page().inputValue('#cs-chat-mode')).equal('channel', 'an out node plays its Channel by default');
    should(await page().textContent('#cs-chat-mode option[value="channel"]')).equal("SMS or WhatsApp, as the test data's addresses say (simulated)");
    for (const [key, value] of [
      ['to', 'whatsapp:+15551234567'],
      ['from', 'whatsapp:+15557654321'],
    ]) {
      await page().click('#cs-chat-add-row');
      await page().locator('#cs-chat-testdata .cs-testdata-key').last().fill(key);
      await page().locator('#cs-chat-testdata .cs-testdata-value').last().fill(value);
    }
    await restart();
    await waitingAt('Notice by WhatsApp (template)');
    const labels = await page().$$eval('#cs-chat-transcript .cs-tap-button', (els) => els.map((e: any) => e.textContent.trim()));
    should(labels).eql(['Confirm', 'Later']);
    should(await page().textContent('#cs-chat-simulated')).match(/^Simulating WhatsApp: /);
    should((await stateOf((await sessionId())!)).channel).equal('TelcoMessagingMessenger');
    should(editor.takeErrors()).eql([]);
  });

  it("offers a call's keypad on a voice start: the digits pressed route the call", async function () {
    await openFlowTab(tabOf(IVR));
    should(await page().isVisible('#cs-chat-keypad')).be.false();
    await restart();
    await waitingAt('Menu');
    should(await page().isVisible('#cs-chat-keypad')).be.true();
    should(await page().textContent('#cs-chat-simulated')).match(/^Simulating a phone call/);
    await page().click('#cs-chat-keypad [data-key="3"]');
    await page().click('#cs-chat-keypad [data-key="#"]');
    await waitingAt('Voicemail');
    const s = await stateOf((await sessionId())!);
    should(s.vars.choice).equal('3');
    should(s.channel).equal('TelcoVoice');
    should(await transcript()).containEql('Please leave a message after the beep. Press the pound key when you are done.');
    should(editor.takeErrors()).eql([]);
  });

  it("shows the help desk's ticket card in the chat, not posted, and its button answers", async function () {
    await openFlowTab(tabOf(HELP_DESK));
    await restart();
    await waitingAt('Ask details');
    await page().fill('#cs-chat-input', 'The printer jams');
    await page().press('#cs-chat-input', 'Enter');
    await page().waitForSelector('#cs-chat-transcript .cs-kind-blocks .cs-block-button');
    should(await page().textContent('#cs-chat-transcript .cs-kind-blocks .cs-tag')).match(/^Slack · simulated · block message preview/);
    const errors = await page().$$eval('#cs-chat-transcript .cs-kind-error .cs-code', (els) => els.map((e: any) => e.textContent.trim()));
    should(errors).not.containEql('4012');
    should(errors).not.containEql('4008');
    await waitingAt('Anything else');
    await page().locator('#cs-chat-transcript .cs-block-button', { hasText: 'Solved' }).first().click();
    await page().waitForSelector('#cs-chat-transcript .cs-kind-end');
    // A mention reads as Slack shows it: the person's name, not the markup.
    should((await transcript()).some((t) => /^Glad it works again, @Ada\./.test(t))).be.true(JSON.stringify(await transcript()));
    should((await transcript()).filter((t) => t.includes('<@'))).eql([]);
    should(editor.takeErrors()).eql([]);
  });

  it("draws the help desk's ticket as Slack draws it: a card with its header, fields and buttons, no JSON and no markup", async function () {
    await openFlowTab(tabOf(HELP_DESK));
    await restart();
    await waitingAt('Ask details');
    await page().fill('#cs-chat-input', 'The *printer* jams');
    await page().press('#cs-chat-input', 'Enter');
    await waitingAt('Anything else');
    const card = '#cs-chat-transcript .cs-kind-blocks .cs-card';
    should(await page().textContent(`${card} .cs-card-header`)).equal('New ticket');
    const fields = await page().$$eval(`${card} .cs-card-field`, (els) => els.map((e: any) => e.textContent));
    should(fields).eql(['From\n@Ada', 'Screenshots\n0']);
    // *Problem* is bold, as Slack shows it; so are the words the person put between asterisks, as in Slack.
    should(await page().$$eval(`${card} .cs-card-text b`, (els) => els.map((e: any) => e.textContent))).eql(['Problem', 'printer']);
    should(await page().textContent(`${card} .cs-card-section:nth-of-type(3) .cs-card-text`)).equal('Problem\nThe printer jams');
    const buttons = await page().$$eval(`${card} .cs-block-button`, (els) => els.map((e: any) => e.textContent.trim()));
    should(buttons).eql(['Solved, thanks', 'Still broken']);
    const bubbles = await transcript();
    should(bubbles.filter((t) => /[[{]\s*"|<@|<#|<!/.test(t))).eql([], 'no JSON and no raw Slack markup in a bubble');
    await page().locator('#cs-chat-transcript').screenshot({ path: '/tmp/cs-ticket-card.png' });
    should(editor.takeErrors()).eql([]);
  });

  it('lets only the question the Session waits at now be answered: the buttons of an earlier one are disabled', async function () {
    await openFlowTab(tabOf(SURVEY));
    await page().selectOption('#cs-chat-start', idOf(SURVEY, 'telco-messenger-start'));
    await page().selectOption('#cs-chat-mode', 'channel');
    await restart();
    await waitingAt('Recommend? (buttons)');
    should(await page().isEnabled('#cs-chat-transcript .cs-tap-button >> text=No')).be.true();
    await page().locator('#cs-chat-transcript .cs-tap-button', { hasText: 'Yes' }).click();
    await waitingAt('Feedback');
    const enabled = await page().$$eval('#cs-chat-transcript .cs-tap-button', (els) => els.map((e: any) => !e.disabled));
    should(enabled).eql([false, false]);
    should(editor.takeErrors()).eql([]);
  });

  it("lets the caller stay silent, with # alone or Stay silent: the IVR's no-input path", async function () {
    await openFlowTab(tabOf(IVR));
    await restart();
    await waitingAt('Menu');
    await page().click('#cs-chat-keypad [data-key="#"]');
    await page().waitForFunction(() => window.$('#cs-chat-transcript .cs-bubble:contains("Sorry, I did not hear anything.")').length === 1, undefined, {
      timeout: 15000,
    });
    await waitingAt('Menu');
    await page().click('#cs-chat-silent');
    await page().waitForFunction(() => window.$('#cs-chat-transcript .cs-bubble:contains("Sorry, I did not hear anything.")').length === 2, undefined, {
      timeout: 15000,
    });
    await waitingAt('Menu');
    should((await transcript()).filter((t) => /\b4009\b/.test(t))).eql([]);
    // The caller's turn reads as what it was, and the call is tagged as a person reads it.
    should((await transcript()).filter((t) => t === '(silence)').length).equal(2);
    should(await page().textContent('#cs-chat-transcript .cs-kind-prompt .cs-tag')).match(/^Phone call · simulated/);
    should(editor.takeErrors()).eql([]);
  });

  it('shows the conversation so far after the browser reloads the editor, and takes the next answer', async function () {
    await openFlowTab('tcbRestart');
    await restart();
    await waitingAt('Ask name');
    const id = (await sessionId())!;
    await editor.load();
    await page().evaluate(() => window.RED.actions.invoke('channel-sessions:show-test-chat'));
    await openFlowTab('tcbRestart');
    await waitingAt('Ask name');
    should(await sessionId()).equal(id);
    should(await transcript()).containEql('Your name?');
    await page().fill('#cs-chat-input', 'Ada');
    await page().press('#cs-chat-input', 'Enter');
    await page().waitForSelector('#cs-chat-transcript .cs-kind-end');
    should(await transcript()).containEql('Hello Ada');
    should((await transcript()).at(-1)).equal('The conversation is over: the Process reached its EndTask.');
    should(editor.takeErrors()).eql([]);
  });

  it('marks test Sessions in the Sessions view, apart from real ones, and names the Channel in words', async function () {
    await openFlowTab('tcbRestart');
    await restart();
    await waitingAt('Ask name');
    await page().click('#cs-show-sessions');
    await page().waitForSelector('#cs-sessions-list .cs-test-mark');
    const groups = await page().$$eval('#cs-sessions-list .cs-group', (els) => els.map((e: any) => e.textContent));
    should(groups).eql(['Test chat']);
    const subgroups = await page().$$eval('#cs-sessions-list .cs-subgroup', (els) => els.map((e: any) => e.textContent));
    should(subgroups.filter((t) => /^(TeamChatChannel|TelcoVoice|TelcoMessaging)/.test(t))).eql([]);
    await page().click('#cs-show-chat');
    should(editor.takeErrors()).eql([]);
  });

  it('ends the previous test Session on Restart, so the node counts one waiting', async function () {
    await openFlowTab('tcbRestart');
    await restart();
    await waitingAt('Ask name');
    const first = (await sessionId())!;
    await restart();
    await waitingAt('Ask name');
    const second = (await sessionId())!;
    const old = await stateOf(first);
    should(old.state).equal('ended');
    should(old.endReason).equal('Restarted from the Test chat in the editor');
    const live = (await editor.red.admin('GET', '/channel-sessions/sessions')).body.filter((s: any) => s.process === 'tcbRestart');
    should(live.map((s: any) => s.id)).eql([second]);
    await eventually(
      async () => (await page().evaluate(() => window.RED.nodes.node('tcbAsk')?.status?.text)) === '1 waiting',
      5000,
      'the node to show one waiting Session',
    );
  });

  it('follows the open flow tab: Restart there runs that Process, and each tab keeps its own Session', async function () {
    const here = (await sessionId())!;
    await openFlowTab(tabOf(SURVEY));
    should(await sessionId()).not.equal(here);
    await page().selectOption('#cs-chat-start', idOf(SURVEY, 'telco-sms-start'));
    await restart();
    await waitingAt('Recommend? (text)');
    const survey = (await sessionId())!;
    should((await stateOf(survey)).process).equal(tabOf(SURVEY));
    should((await stateOf(here)).state).equal('waiting', "the other tab's Session goes on waiting");
    await openFlowTab('tcbRestart');
    should(await sessionId()).equal(here);
    await waitingAt('Ask name');
  });

  it('keeps a test Session over a restart of Node-RED: the answer after it continues the conversation', async function () {
    const id = (await sessionId())!;
    await editor.red.restart();
    await page().fill('#cs-chat-input', 'Ada');
    await eventually(
      async () => {
        await page().press('#cs-chat-input', 'Enter');
        await new Promise((r) => setTimeout(r, 300));
        return (await page().getAttribute('#cs-chat-state', 'data-state')) === 'completed';
      },
      20000,
      'the answer after the restart',
    );
    should(await sessionId()).equal(id);
    should(await transcript()).containEql('Hello Ada');
    should(await page().textContent('#cs-chat-transcript')).not.match(/lost/);
  });

  it('shows the end of the Session when a read of its middle comes back last: the older answer is not shown', async function () {
    // The restart before this case left the editor's failed reconnects in the console.
    editor.takeErrors();
    await openFlowTab('tcbSlow');
    await restart();
    await waitingAt('Ask order');
    const id = (await sessionId())!;
    // The first read of the Session in the middle of the answer's step goes to Node-RED at once;
    // its answer is held back until the chat shows the Session's end, as a slow connection would.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let heldBody: string | undefined;
    let delivered!: () => void;
    const heldDelivered = new Promise<void>((resolve) => (delivered = resolve));
    const isRead = (url: URL) => url.pathname.endsWith(`/channel-sessions/sessions/${id}`);
    await page().route(isRead, async (route) => {
      if (route.request().method() !== 'GET' || heldBody !== undefined) return route.continue();
      const response = await route.fetch();
      const body = await response.text();
      if (heldBody === undefined && JSON.parse(body).state === 'running') {
        heldBody = body;
        await released;
        await route.fulfill({ response });
        delivered();
      } else {
        await route.fulfill({ response });
      }
    });
    try {
      await page().fill('#cs-chat-input', '4711');
      await page().press('#cs-chat-input', 'Enter');
      await page().waitForSelector('#cs-chat-transcript .cs-kind-end', { timeout: 15000 });
      await eventually(() => heldBody, 5000, 'a read of the Session in the middle of the step, held back');
      should(JSON.parse(heldBody!).transcript.map((l: { text: string }) => l.text)).not.containEql('Thanks for order 4711');
      release();
      await heldDelivered;
      // Time for the page to take the held answer in.
      await new Promise((r) => setTimeout(r, 500));
      should(await transcript()).containEql('Thanks for order 4711');
      should(await page().getAttribute('#cs-chat-state', 'data-state')).equal('completed');
      should(await page().locator('#cs-chat-transcript .cs-kind-end').count()).equal(1);
    } finally {
      release();
      await page().unroute(isRead);
    }
    should(editor.takeErrors()).eql([]);
  });
});
