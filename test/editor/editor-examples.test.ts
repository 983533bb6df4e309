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
    for (const name of ['teamchat-environment:Help desk workspace', 'telco-messaging-environment:Survey numbers', 'telco-voice-environment:Phone agent']) {
      await editor.red.waitForLog(new RegExp(`\\[warn\\] \\[${name}\\] Missing`));
    }
    const warnings = editor.red.logs
      .slice(mark)
      .filter((l) => /\[(warn|error)\]/.test(l))
      .map((l) => l.replace(/^.*?\[(warn|error)\] /, ''));
    // The only warnings left are the credentials a user needs to paste, one line per Environment,
    // and, for each messaging Environment, the Public base URL its delivery statuses need.
    const noBase = (name: string) =>
      `[telco-messaging-environment:${name}] No Public base URL: Twilio cannot be asked for delivery statuses, so a failed or undelivered message never takes the error branch of the Task that waits after it; and files cannot be linked (SMS leaves them out, WhatsApp stops with 4008). Set it to the address Twilio reaches this Node-RED at`;
    should(warnings.sort()).eql([
      '[teamchat-environment:Help desk workspace] Missing Bot Token and Signing Secret: Tasks that post to Slack stop with 4008; the Event URL refuses every request',
      '[telco-messaging-environment:Appointment texts] Missing Account SID and Auth Token: messages cannot be sent (4008); inbound messages are refused (4020)',
      noBase('Appointment texts'),
      '[telco-messaging-environment:Delivery numbers] Missing Account SID and Auth Token: messages cannot be sent (4008); inbound messages are refused (4020)',
      noBase('Delivery numbers'),
      noBase('SMS and WhatsApp (fake credentials)'),
      '[telco-messaging-environment:Survey numbers] Missing Account SID and Auth Token: messages cannot be sent (4008); inbound messages are refused (4020)',
      noBase('Survey numbers'),
      '[telco-voice-environment:Appointment reminders] Missing Account SID and Auth Token: calls are hung up (4008)',
      '[telco-voice-environment:Phone IVR] Missing Account SID and Auth Token: calls are hung up (4008)',
      '[telco-voice-environment:Phone agent] Missing Account SID and Auth Token: calls are hung up (4008)',
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
