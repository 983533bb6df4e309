import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import should from 'should';
import { tab } from '../harness/flows';
import { NodeRed, eventually } from '../harness/node-red';
import { FakeSlack } from '../fakes/slack-api';
import { approvalDesk, teamchatEnvironment } from '../fakes/slack-flows';

// Code in page.evaluate runs in the browser; the tests compile without the DOM library.
declare const window: any;

const CHROMIUM = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'].find((p) => existsSync(p));
const IDS = { start: 'tcstart01', blocks: 'tcblocks1', ask: 'tcask0001', reply: 'tcreply01', end: 'tcend0001' };

/**
 * In the Test chat, the buttons and menus of a block message preview answer the waiting InputTask
 * as a click in Slack would: the route the sidebar calls, and the sidebar itself in a real browser.
 */
describe('test chat: clickable block message buttons', function () {
  this.timeout(90000);
  let red: NodeRed;
  let fake: FakeSlack;

  before(async () => {
    fake = await FakeSlack.start();
    red = await NodeRed.start();
    await red.deploy([
      tab('tcflow', 'Approvals'),
      teamchatEnvironment('tcenv', 'testChatClicksToken0000001', fake, { defaultChannel: 'C0TESTCHAT' }),
      ...approvalDesk('tcflow', 'tcenv', IDS).map((n) => (n.id === IDS.start ? { ...n, testData: { text: 'approve my leave' } } : n)),
    ]);
  });
  after(async () => {
    await red?.close();
    await fake?.close();
  });

  async function startTest(): Promise<any> {
    const res = await red.admin('POST', '/channel-sessions/test-sessions', { start: IDS.start, testData: { text: 'approve my leave', from: 'U0ADA' } });
    should(res.status).equal(201, res.text);
    should(res.body.state).equal('waiting');
    return res.body;
  }

  it("a click sent by the sidebar answers like Slack's: value in the Store variable, the fields in {decision_action}", async () => {
    const session = await startTest();
    const preview = session.transcript.find((l: any) => l.kind === 'blocks');
    should(preview.detail[1].elements.map((e: any) => e.action_id)).deepEqual(['approve', 'reject', 'priority']);
    const res = await red.admin('POST', `/channel-sessions/test-sessions/${session.id}/actions`, {
      action_id: 'priority',
      block_id: 'decide',
      value: 'high',
      text: 'High',
    });
    should(res.status).equal(200, res.text);
    should(res.body.state).equal('completed');
    should(res.body.vars.decision).equal('high');
    should(res.body.vars.decision_action).deepEqual({ action_id: 'priority', block_id: 'decide', value: 'high', text: 'High', user: 'U0ADA' });
    should(res.body.transcript.map((l: any) => l.text)).containEql('You chose high (High via priority in decide, by U0ADA)');
    // The person's line shows what they saw on the control, as the chat apps show a tapped button, not its value.
    should(res.body.transcript.filter((l: any) => l.from === 'user').map((l: any) => l.text)).deepEqual(['approve my leave', 'High']);
  });

  it('refuses a click with fields that are not text (400), on an unknown Session (404), and when nothing waits (409)', async () => {
    const session = await startTest();
    const bad = await red.admin('POST', `/channel-sessions/test-sessions/${session.id}/actions`, { action_id: 'approve', value: { not: 'text' } });
    should(bad.status).equal(400);
    const unknown = await red.admin('POST', '/channel-sessions/test-sessions/nope/actions', { action_id: 'approve', value: 'yes' });
    should(unknown.status).equal(404);
    const answered = await red.admin('POST', `/channel-sessions/test-sessions/${session.id}/actions`, {
      action_id: 'approve',
      block_id: 'decide',
      value: 'yes',
      text: 'Approve',
    });
    should(answered.body.state).equal('completed');
    const late = await red.admin('POST', `/channel-sessions/test-sessions/${session.id}/actions`, {
      action_id: 'approve',
      block_id: 'decide',
      value: 'yes',
      text: 'Approve',
    });
    should(late.status).equal(409);
  });

  describe('in the sidebar', function () {
    let context: BrowserContext;
    let page: Page;
    let profile: string;

    before(async function () {
      if (!CHROMIUM) this.skip();
      profile = mkdtempSync(join(tmpdir(), 'cs-chromium-'));
      context = await chromium.launchPersistentContext(profile, {
        executablePath: CHROMIUM,
        headless: true,
        viewport: { width: 1600, height: 900 },
        args: [
          '--no-sandbox',
          '--disable-gpu',
          '--disable-quic',
          '--no-first-run',
          '--disable-background-networking',
          '--disable-component-update',
          '--disable-sync',
        ],
      });
      page = context.pages()[0] ?? (await context.newPage());
      await page.goto(red.url('/'));
      await page.waitForFunction((id) => !!window.RED?.nodes?.node?.(id) && !!window.RED.sidebar?.containsTab?.('channel-sessions-chat'), IDS.start, {
        timeout: 60000,
      });
    });
    after(async () => {
      await context?.close();
      if (profile) rmSync(profile, { recursive: true, force: true });
    });

    it('shows the buttons of the preview, and a click on one answers the InputTask', async () => {
      await page.evaluate(() => window.RED.sidebar.show('channel-sessions-chat'));
      await page.waitForSelector('#cs-chat-process option[value="tcflow"]', { state: 'attached' });
      await page.selectOption('#cs-chat-process', 'tcflow');
      await page.click('#cs-chat-start-session');
      await page.waitForSelector('#cs-chat-transcript .cs-kind-blocks .cs-block-button:not([disabled])');
      const labels = await page.$$eval('#cs-chat-transcript .cs-block-button', (els) => els.map((e) => e.textContent?.trim()));
      should(labels).deepEqual(['Approve', 'Reject']);
      const options = await page.$$eval('#cs-chat-transcript .cs-block-select option', (els) => els.map((e) => e.textContent));
      should(options).deepEqual(['Priority', 'High', 'Low']);
      await page.click('#cs-chat-transcript .cs-block-button:has-text("Reject")');
      await page.waitForSelector('#cs-chat-transcript .cs-kind-end');
      const texts = await page.$$eval('#cs-chat-transcript .cs-line .cs-text', (els) => els.map((e) => e.textContent));
      should(texts).containEql('You chose no (Reject via reject in decide, by U0TESTUSER)');
      const said = await page.$$eval('#cs-chat-transcript .cs-from-user .cs-text', (els) => els.map((e) => e.textContent));
      should(said).deepEqual(['approve my leave', 'Reject']);
      should(await page.isDisabled('#cs-chat-transcript .cs-block-button >> nth=0')).be.true('a completed Session takes no more clicks');
      const id = await page.getAttribute('#cs-chat-state', 'data-session');
      const done = await eventually(
        async () => {
          const d = (await red.admin('GET', `/channel-sessions/sessions/${id}`)).body;
          return d.state === 'completed' ? d : undefined;
        },
        5000,
        'the completed Session',
      );
      should(done.vars.decision_action).containEql({ action_id: 'reject', value: 'no', text: 'Reject' });
    });
  });
});
