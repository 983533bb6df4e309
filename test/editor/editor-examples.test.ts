import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import should from 'should';
import { Editor, NO_BROWSER, findChromium } from '../harness/browser';
import { REPO_ROOT, eventually } from '../harness/node-red';

// Code in page.evaluate runs in the browser; the tests compile without the DOM library.
declare const window: any;
declare const document: any;

const EXAMPLES = readdirSync(join(REPO_ROOT, 'examples'))
  .filter((f) => f.endsWith('.json'))
  .map((f) => f.replace(/\.json$/, ''))
  .sort();
const ENVIRONMENT_TYPES = ['teamchat-environment', 'telco-voice-environment', 'telco-messaging-environment'];
/** How many Environments the examples bring in all. */
const ENVIRONMENTS = EXAMPLES.flatMap(
  (name) => JSON.parse(readFileSync(join(REPO_ROOT, 'examples', `${name}.json`), 'utf8')) as Array<{ type: string }>,
).filter((n) => ENVIRONMENT_TYPES.includes(n.type)).length;

/**
 * A first-time user in the editor: imports every example into one workspace, deploys, and reads the
 * canvas. Examples share no ids, each Environment gets its token on import, the deploy log has no
 * "No token" warning, and nodes are labelled in words, not `{placeholders}`.
 */
(findChromium() ? describe : describe.skip)(`the examples in the editor${findChromium() ? '' : ` (${NO_BROWSER})`}`, function () {
  this.timeout(120000);
  let editor: Editor;
  before(async function () {
    editor = await Editor.open({ width: 1600, height: 900 });
  });
  after(async function () {
    await editor?.close();
  });

  /** The tokens the editor holds for the Environments on the canvas, by node id. */
  const editorTokens = () =>
    editor.page.evaluate((types) => {
      const R = window.RED;
      const found: Record<string, string | null> = {};
      R.nodes.eachConfig((n: any) => {
        if (types.includes(n.type)) found[n.id] = n.credentials?.token ?? null;
      });
      return found;
    }, ENVIRONMENT_TYPES);

  it('imports every example into one workspace, one after another, with no id conflict', async function () {
    for (const name of EXAMPLES) {
      const imported = await editor.importExample(name);
      should(imported.error).equal(undefined, `${name}: ${imported.error}`);
      await editor.dropImported();
    }
    const tabs = await editor.page.evaluate(() => {
      const R = window.RED;
      const labels: string[] = [];
      R.nodes.eachWorkspace((w: any) => labels.push(w.label));
      return labels;
    });
    should(tabs).containDeep([
      'Phone IVR',
      'SMS and WhatsApp survey',
      'Slack help desk',
      'Slack AI assistant',
      'One Process, three channels',
      'Start here: the Test chat',
      'Phone agent',
    ]);
    should(editor.takeErrors()).eql([]);
  });

  it('gives each imported Environment a token of its own, so all deploy with no "No token" warning', async function () {
    const tokens = await eventually(
      async () => {
        const held = await editorTokens();
        return Object.values(held).length === ENVIRONMENTS && Object.values(held).every((t) => !!t) && held;
      },
      15000,
      'a token in every imported Environment',
    );
    const values = Object.values(tokens) as string[];
    for (const token of values) should(token).match(/^[A-Za-z0-9_-]{32}$/);
    should(new Set(values).size).equal(values.length);

    const mark = editor.red.logs.length;
    should(await editor.deploy()).equal('ok');
    // Each Environment warns as its node starts: wait for every one of them, in whatever order they come.
    for (const name of [
      'teamchat-environment:Help desk workspace',
      'teamchat-environment:AI assistant workspace',
      'telco-messaging-environment:Survey numbers',
      'telco-voice-environment:Phone agent',
    ]) {
      await editor.red.waitForLog(new RegExp(`\\[warn\\] \\[${name}\\] `));
    }
    const warnings = editor.red.logs
      .slice(mark)
      .filter((l) => /\[(warn|error)\]/.test(l))
      .map((l) => l.replace(/^.*?\[(warn|error)\] /, ''));
    // The only warnings left: one line for each Environment, saying what the nodes using it need.
    const testChat = 'the Test chat plays it without them';
    const answerCalls = `Call start needs the Account SID and Auth Token to answer calls (without them calls are hung up, 4008); ${testChat}`;
    const postToSlack = `Tasks that post to Slack need the Bot Token (without it they stop with 4008); the Event URL needs the Signing Secret to take Slack's requests (until then it refuses every one); ${testChat}`;
    const undelivered = 'Tasks that wait for an answer need a Public base URL to take their error branch when a message is not delivered';
    should(warnings.sort()).eql([
      `[teamchat-environment:AI assistant workspace] ${postToSlack}`,
      `[teamchat-environment:Help desk workspace] ${postToSlack}`,
      `[telco-messaging-environment:Appointment texts] Text out needs the Account SID and Auth Token to send messages; ${testChat}`,
      `[telco-messaging-environment:Delivery numbers] Text out needs the Account SID and Auth Token to send messages; ${undelivered}; ${testChat}`,
      `[telco-messaging-environment:SMS and WhatsApp (fake credentials)] ${undelivered}; ${testChat}`,
      `[telco-messaging-environment:Survey numbers] WhatsApp start and SMS start need the Account SID and Auth Token to take messages and answer them; ${undelivered}; ${testChat}`,
      `[telco-voice-environment:Appointment reminders] Call out needs a Caller ID, a Public base URL and the Account SID and Auth Token to place calls; ${testChat}`,
      `[telco-voice-environment:Phone IVR] ${answerCalls}`,
      `[telco-voice-environment:Phone agent] ${answerCalls}`,
    ]);
    // The inbound URLs carry the tokens: known to the runtime (a signature check, not 404).
    const envs = await editor.page.evaluate(() => {
      const R = window.RED;
      const list: Array<{ id: string; type: string }> = [];
      R.nodes.eachConfig((n: any) => list.push({ id: n.id, type: n.type }));
      return list;
    });
    // The one Environment of an example with (fake) credentials, so the call reaches the signature check.
    const voice = envs.find((e) => e.id === 'cs3p00000000e2')!;
    const slack = envs.find((e) => e.type === 'teamchat-environment')!;
    should(
      (
        await editor.red.request('POST', `/api/TelcoModule/Voice/start/${tokens[voice.id]}`, 'CallSid=CA1', {
          'Content-Type': 'application/x-www-form-urlencoded',
        })
      ).status,
    ).equal(403);
    should((await editor.red.request('POST', `/TeamChat/event/${tokens[slack.id]}`, {})).status).equal(401);
  });

  it("keeps a deployed Environment's token when the editor loads the flows again", async function () {
    const deployed: Record<string, string> = {};
    for (const [id] of Object.entries(await editorTokens())) {
      const type = (await editor.red.admin('GET', '/flows')).body.find((n: any) => n.id === id).type;
      deployed[id] = (await editor.red.admin('GET', `/credentials/${type}/${id}`)).body.token;
    }
    await editor.load();
    // The editor asks the runtime for each Environment it loads; give those answers time to arrive.
    await editor.page.waitForTimeout(500);
    should(await editor.page.evaluate(() => window.RED.nodes.dirty())).be.false();
    for (const [id, token] of Object.entries(deployed)) {
      should(token).match(/^[A-Za-z0-9_-]{32}$/);
      const type = (await editor.red.admin('GET', '/flows')).body.find((n: any) => n.id === id).type;
      should((await editor.red.admin('GET', `/credentials/${type}/${id}`)).body.token).equal(token);
    }
    should(editor.takeErrors()).eql([]);
  });

  it('labels every node and Environment in words, never as a raw type or a {placeholder}', async function () {
    const types = await editor.packageTypes();
    const labels = await editor.page.evaluate((types: string[]) => {
      const R = window.RED;
      const out: Array<{ type: string; palette: string; fresh?: string; icon?: string }> = [];
      const ws = R.workspaces.active();
      for (const type of types) {
        const def = R.nodes.getType(type);
        const palette = R.utils.getPaletteLabel(type, def);
        if (def.category === 'config') {
          out.push({ type, palette });
          continue;
        }
        // As dropped from the palette: the defaults, no name.
        const created = R.view.createNode(type, 100, 100, ws);
        // An icon Node-RED does not know (a brand icon of Font Awesome, in Node-RED 4) falls back to its arrow.
        out.push({ type, palette, fresh: R.utils.getNodeLabel(created.node, type), icon: R.utils.getNodeIcon(def, created.node) });
      }
      return out;
    }, types);
    for (const l of labels) {
      should(l.palette).not.equal(l.type);
      if (l.fresh !== undefined) should(l.fresh).not.match(/^\{[^}]*\}$/, `${l.type} reads "${l.fresh}"`);
      if (l.icon !== undefined) should(l.icon).not.match(/arrow-in\.svg$/, `${l.type} shows Node-RED's fallback icon`);
    }
    const canvas = await editor.page.evaluate(() => {
      const R = window.RED;
      const found: string[] = [];
      R.nodes.eachNode((n: any) => found.push(R.utils.getNodeLabel(n, n.type)));
      return found;
    });
    should(canvas.filter((l) => /^\{[^}]*\}$/.test(l))).eql([]);
    // A start without a name says what it is and which Environment it serves.
    const unnamed = await editor.page.evaluate(() => {
      const R = window.RED;
      const sms = R.nodes.node('cssv0000000000a2');
      return R.utils.getNodeLabel({ ...sms, name: '' }, sms.type);
    });
    should(unnamed).equal('SMS start: Survey numbers');
  });

  /**
   * One path of an example in the Test chat, as a person plays it: the flow tab, the start, test
   * data to change, then what the person does (types, presses keys, stays silent, clicks a button).
   */
  interface TestChatPath {
    tab: string;
    start?: string;
    data?: Record<string, string>;
    steps: Array<{ say?: string; keys?: string; silent?: true; click?: string; until: string }>;
    ends?: 'completed' | 'waiting';
  }
  const PATHS: Record<string, TestChatPath> = {
    'Start here': {
      tab: 'cs0s0000000001',
      steps: [
        { say: 'Ada', until: 'Send me a file' },
        { say: 'no file today', until: 'END' },
      ],
    },
    'three channels, Slack': { tab: 'cs3p0000000001', start: 'cs3p0000000010', steps: [{ say: '4711', until: 'END' }] },
    'three channels, call': { tab: 'cs3p0000000001', start: 'cs3p0000000011', steps: [{ keys: '4711#', until: 'END' }] },
    'three channels, SMS': { tab: 'cs3p0000000001', start: 'cs3p0000000012', steps: [{ say: '4711', until: 'END' }] },
    'three channels, WhatsApp': { tab: 'cs3p0000000001', start: 'cs3p0000000013', steps: [{ say: '4711', until: 'END' }] },
    'help desk, solved': {
      tab: 'cshd000000000001',
      start: 'cshd000000000010',
      steps: [
        { say: 'The printer jams', until: 'Anything to add?' },
        { click: 'Solved, thanks', until: 'END' },
      ],
    },
    'help desk, typed': {
      tab: 'cshd000000000001',
      start: 'cshd000000000010',
      steps: [
        { say: 'The printer jams', until: 'Anything to add?' },
        { say: 'It is the second floor one', until: 'END' },
      ],
    },
    'help desk, morning check-in': { tab: 'cshd000000000001', start: 'cshd000000000032', steps: [{ say: 'Nothing, thanks', until: 'END' }] },
    'AI assistant, liked': { tab: 'cssa000000000001', steps: [{ say: 'positive', until: 'END' }] },
    'AI assistant, disliked': { tab: 'cssa000000000001', steps: [{ say: 'negative', until: 'END' }] },
    'IVR, sales': { tab: 'ivr-tab', steps: [{ keys: '1#', until: 'END' }] },
    'IVR, support by voice': { tab: 'ivr-tab', steps: [{ say: 'support please', until: 'END' }] },
    'IVR, no input then not understood then voicemail': {
      tab: 'ivr-tab',
      steps: [
        { silent: true, until: 'Sorry, I did not hear anything.' },
        { keys: '9#', until: 'Sorry, I did not understand' },
        { keys: '3#', until: 'Please leave a message' },
        { say: 'Call me back', until: 'END' },
      ],
    },
    'survey, WhatsApp': {
      tab: 'cssv000000000001',
      start: 'cssv0000000000a1',
      steps: [
        { click: 'Yes', until: 'What could we do better?' },
        { say: 'More coffee', until: 'END' },
      ],
    },
    'survey, SMS': {
      tab: 'cssv000000000001',
      start: 'cssv0000000000a2',
      steps: [
        { say: 'NO', until: 'What could we do better?' },
        { say: 'Faster replies', until: 'END' },
      ],
    },
    'reminder, confirmed': { tab: 'remind-tab', steps: [{ keys: '1#', until: 'END' }] },
    'reminder, silence then reschedule': {
      tab: 'remind-tab',
      steps: [
        { silent: true, until: 'Sorry, I did not hear anything.' },
        { keys: '2#', until: 'END' },
      ],
    },
    'reminder, machine': { tab: 'remind-tab', data: { outcome: 'machine' }, steps: [{ until: 'END' }] },
    'reminder, busy': { tab: 'remind-tab', data: { outcome: 'busy' }, steps: [{ until: 'we could not reach you by phone' }] },
    'reminder, no answer': { tab: 'remind-tab', data: { outcome: 'no-answer' }, steps: [{ until: 'we could not reach you by phone' }] },
    'delivery, SMS': { tab: 'csdn000000000001', steps: [{ say: 'YES', until: 'END' }] },
    'delivery, WhatsApp': {
      tab: 'csdn000000000001',
      data: { to: 'whatsapp:+15551234567', from: 'whatsapp:+15557654321' },
      steps: [{ click: 'Confirm', until: 'END' }],
    },
    'phone agent': {
      tab: 'agent-tab',
      steps: [
        { say: 'What are your opening hours?', until: 'Ask for a person, or say bye.' },
        { say: 'bye', until: 'END' },
      ],
    },
  };
  /** What a person must never read in the chat on a path that should succeed. */
  const WRONG: Array<[RegExp, string]> = [
    [/\b[1-9]\d{3} [A-Z][a-z]+[A-Z]\w+/, 'an engine error code'],
    [/\{[a-zA-Z_.]+\}|\w ,|\s{2,}\w|\b(Hi|Thanks) ,/, 'an empty or unfilled placeholder'],
    [/[[{]\s*"\w+"\s*:/, 'JSON'],
    [/<[@#!][A-Z0-9^|]+>/, 'raw Slack markup'],
    [/TelcoMessagingMessenger|TelcoMessagingSms|TeamChatChannel|TelcoVoice/, 'an internal Channel name'],
    [/\?\.|\(s\)/, 'odd punctuation'],
  ];

  it('runs every path of every example in the Test chat with no account, as a person reads it', async function () {
    this.timeout(600000);
    const page = editor.page;
    await page.evaluate(() => window.RED.actions.invoke('channel-sessions:show-test-chat'));
    const bubbles = () => page.$$eval('#cs-chat-transcript .cs-line .cs-bubble', (els: any[]) => els.map((e) => e.textContent.trim()));
    const shows = (text: string) =>
      page.waitForFunction(
        (text: string) =>
          text === 'END'
            ? window.$('#cs-chat-state').attr('data-state') === 'completed'
            : window.$('#cs-chat-transcript .cs-bubble').filter((_i: number, e: any) => e.textContent.includes(text)).length > 0,
        text,
        { timeout: 15000 },
      );
    const waiting = () => page.waitForFunction(() => window.$('#cs-chat-state').attr('data-state') === 'waiting', undefined, { timeout: 15000 });
    const problems: string[] = [];
    const seen: string[] = [];
    for (const [name, path] of Object.entries(PATHS)) {
      await page.evaluate((id: string) => window.RED.workspaces.show(id), path.tab);
      await eventually(async () => (await page.inputValue('#cs-chat-process')) === path.tab, 5000, `${name}: the chat on its tab`);
      if (path.start) await page.selectOption('#cs-chat-start', path.start);
      if (await page.locator('#cs-chat-mode option[value="channel"]').count()) await page.selectOption('#cs-chat-mode', 'channel');
      for (const [key, value] of Object.entries(path.data ?? {})) {
        await page.evaluate(
          ([key, value]: string[]) => {
            const row = window.$('#cs-chat-testdata .cs-testdata-row').filter((_i: number, r: any) => window.$(r).find('.cs-testdata-key').val() === key);
            row.find('.cs-testdata-value').val(value);
          },
          [key, value],
        );
      }
      const before = await page.getAttribute('#cs-chat-state', 'data-session');
      await page.click('#cs-chat-start-session');
      await page.waitForFunction((before: string | null) => window.$('#cs-chat-state').attr('data-session') !== before, before);
      try {
        for (const step of path.steps) {
          if (step.say || step.keys || step.silent || step.click) await waiting();
          if (step.say) {
            await page.fill('#cs-chat-input', step.say);
            await page.press('#cs-chat-input', 'Enter');
          }
          for (const key of step.keys ?? '') await page.click(`#cs-chat-keypad [data-key="${key}"]`);
          if (step.silent) await page.click('#cs-chat-silent');
          if (step.click) await page.locator('#cs-chat-transcript button:not([disabled])', { hasText: step.click }).last().click();
          await shows(step.until);
        }
      } catch (err) {
        problems.push(`${name}: ${(err as Error).message.split('\n')[0]}; the chat shows ${JSON.stringify(await bubbles())}`);
        continue;
      }
      const read = await bubbles();
      seen.push(`${name}: ${read.length} lines`);
      for (const [pattern, what] of WRONG) {
        for (const text of read.filter((t) => pattern.test(t))) problems.push(`${name}: ${what} in "${text}"`);
      }
      const errors = await page.$$eval('#cs-chat-transcript .cs-kind-error, #cs-chat-transcript .cs-kind-warn', (els: any[]) =>
        els.map((e) => e.textContent.trim()),
      );
      for (const e of errors) problems.push(`${name}: an error line "${e}"`);
    }
    should(problems).eql([]);
    // Every path ran to its end and said something (a path that stopped early is a problem above).
    should(seen.length).equal(Object.keys(PATHS).length, seen.join('; '));
    should(editor.takeErrors()).eql([]);
  });

  it('offers "Add new Messaging Environment" for an SMS start, like the other modules', async function () {
    const offered = await editor.page.evaluate(async () => {
      const R = window.RED;
      const $ = window.$;
      const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));
      const result: Record<string, string> = {};
      // As in a new workspace: "Add new ..." shows while no Environment of the kind exists.
      R.nodes.clear();
      R.workspaces.add();
      for (const type of ['telco-sms-start', 'telco-call-start', 'teamchat-start']) {
        const created = R.view.createNode(type, 200, 200, R.workspaces.active());
        const node = R.nodes.add(created.node);
        R.editor.edit(node);
        for (let i = 0; i < 400 && !$('#node-input-environment option[value="_ADD_"]').length; i++) await wait(50);
        result[type] = $('#node-input-environment option[value="_ADD_"]').text();
        // The tray finishes opening on timers of its own; closing it earlier makes Node-RED resize a closed pane.
        await wait(500);
        $('#node-dialog-cancel').trigger('click');
        for (let i = 0; i < 400 && document.querySelector('#node-dialog-cancel'); i++) await wait(50);
        R.nodes.remove(node.id);
      }
      return result;
    });
    should(offered).eql({
      'telco-sms-start': 'Add new Messaging Environment...',
      'telco-call-start': 'Add new Voice Environment...',
      'teamchat-start': 'Add new Team chat Environment...',
    });
    should(editor.takeErrors()).eql([]);
  });
});
