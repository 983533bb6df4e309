import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import should from 'should';
import { NodeRed } from '../harness/node-red';

const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';

/** The messaging nodes in the real Node-RED editor, driven by a headless browser. */
if (!existsSync(CHROMIUM)) console.log(`# messaging-editor: skipped, no browser at ${CHROMIUM}`);
(existsSync(CHROMIUM) ? describe : describe.skip)('messaging editor', function () {
  this.timeout(120000);
  let red: NodeRed;
  let browser: Browser;
  let page: Page;

  before(async function () {
    red = await NodeRed.start();
    await red.deploy([
      { id: 'edTab', type: 'tab', label: 'Editor' },
      { id: 'edStart', type: 'telco-sms-start', z: 'edTab', x: 120, y: 80, wires: [[]], environment: '', variable: 'message', testData: {} },
    ]);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    page = await browser.newPage();
    await page.goto(red.url('/'));
    await page.waitForFunction(
      () => {
        const RED = (globalThis as any).RED;
        return RED?.nodes?.getType?.('telco-messenger-buttons') && RED.nodes.node('edStart');
      },
      null,
      { timeout: 30000 },
    );
  });
  after(async function () {
    await browser?.close();
    await red?.close();
  });

  it('registers every node type in the channel sessions palette with catalog labels', async function () {
    const types = await page.evaluate(() => {
      const RED = (globalThis as any).RED;
      return ['telco-sms-start', 'telco-messenger-start', 'telco-messenger-buttons'].map((t) => {
        const def = RED.nodes.getType(t);
        const label = typeof def.paletteLabel === 'function' ? def.paletteLabel.call({ _: def._ }) : def.paletteLabel;
        return [t, def.category, def.color, label];
      });
    });
    should(types).eql([
      ['telco-sms-start', 'channel sessions', '#bfe3c8', 'SMS start'],
      ['telco-messenger-start', 'channel sessions', '#bfe3c8', 'WhatsApp start'],
      ['telco-messenger-buttons', 'channel sessions', '#bfe3c8', 'WhatsApp buttons'],
    ]);
    should(await page.evaluate(() => (globalThis as any).RED.nodes.getType('telco-messaging-environment').category)).equal('config');
  });

  it('validates the MG, AC, HX and variable patterns', async function () {
    const results = await page.evaluate(() => {
      const RED = (globalThis as any).RED;
      const env = RED.nodes.getType('telco-messaging-environment');
      const buttons = RED.nodes.getType('telco-messenger-buttons');
      const start = RED.nodes.getType('telco-messenger-start');
      return {
        mg: [
          env.defaults.messagingServiceSid.validate('MG' + 'a'.repeat(32)),
          env.defaults.messagingServiceSid.validate('PN' + 'a'.repeat(32)),
          env.defaults.messagingServiceSid.validate(''),
        ],
        ac: [env.credentials.accountSid.validate('AC' + 'b'.repeat(32)), env.credentials.accountSid.validate('SK123')],
        autoDeploy: [
          env.defaults.autoDeploy.validate.call({ messagingServiceSid: '' }, true),
          env.defaults.autoDeploy.validate.call({ messagingServiceSid: 'MG' + 'a'.repeat(32) }, true),
        ],
        hx: [
          buttons.defaults.contentSid.validate('HX' + 'c'.repeat(32)),
          buttons.defaults.contentSid.validate('HX123'),
          buttons.defaults.contentSid.validate('{template}'),
        ],
        bare: [buttons.defaults.resultVariable.validate('choice'), buttons.defaults.resultVariable.validate('{choice}')],
        e164: [start.defaults.testData.validate({ from: '+447700900123' }), start.defaults.testData.validate({ from: '0770 0900' })],
      };
    });
    should(results).eql({
      mg: [true, false, true],
      ac: [true, false],
      autoDeploy: [false, true],
      hx: [true, false, true],
      bare: [true, false],
      e164: [true, false],
    });
  });

  it('generates the token in a new Environment and shows the full URLs with a copy button', async function () {
    await page.evaluate(() => {
      const RED = (globalThis as any).RED;
      RED.editor.editConfig('environment', 'telco-messaging-environment', '_ADD_', 'node-input');
    });
    const tokenInput = page.locator('#node-config-input-token');
    await tokenInput.waitFor({ state: 'visible', timeout: 10000 });
    const token = await tokenInput.inputValue();
    should(token).match(/^[A-Za-z0-9_-]{32}$/, 'base64url of 24 random bytes');
    should(await tokenInput.getAttribute('readonly')).equal('');
    should(await page.locator('#telco-messaging-inbound-url').innerText()).equal(`/api/TelcoModule/Messaging/inbound/${token}`);
    await page.locator('#node-config-input-publicBaseUrl').fill('https://nodered.example.com/');
    should(await page.locator('#telco-messaging-inbound-url').innerText()).equal(`https://nodered.example.com/api/TelcoModule/Messaging/inbound/${token}`);
    should(await page.locator('#telco-messaging-start-url').innerText()).equal(`https://nodered.example.com/api/TelcoModule/Messaging/start/${token}`);
    should(await page.locator('#node-config-dialog-edit-form .cs-copy').count()).equal(2);
    should((await page.locator('label[for="node-config-input-accountSid"]').innerText()).trim()).equal('Account SID');
    should(await page.locator('#node-config-input-authToken').getAttribute('type')).equal('password');
  });
});
