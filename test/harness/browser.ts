import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { NodeRed, REPO_ROOT, type StartOptions } from './node-red';

// Code in page.evaluate runs in the browser; the tests compile without the DOM library.
declare const window: any;
declare const document: any;

export const MODULE = '@channel-sessions/node-red';

/** Debian's chromium (or CHROMIUM_PATH, the only candidate when set); undefined when there is none. */
export function findChromium(): string | undefined {
  const candidates = process.env.CHROMIUM_PATH ? [process.env.CHROMIUM_PATH] : ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'];
  return candidates.find((p) => existsSync(p));
}

export const NO_BROWSER = "no chromium found (install Debian's chromium: apt-get install -y chromium, or set CHROMIUM_PATH)";

/** `CS_SCREENSHOTS=1` saves the pictures the README shows into docs/images/. */
export const SCREENSHOTS = process.env.CS_SCREENSHOTS === '1' ? join(REPO_ROOT, 'docs/images') : undefined;

/**
 * Whether a page error was thrown by Node-RED's editor bundle with none of our code on its stack:
 * every frame is in red.min.js (or red.js, or its vendor files), so it ran from the editor's own
 * timers and events (a node's own script runs through eval: its frames say `eval at`, or
 * `<anonymous>`). Node-RED 5.0's editor throws such errors now and then on a loaded machine
 * (a popover or tree list touched after it was removed). A page error our node code causes has a
 * frame of that code on its stack, and still counts.
 */
export function nodeRedOwnFault(stack: string | undefined): boolean {
  const frames = (stack ?? '').split('\n').filter((line) => /^\s+at /.test(line));
  return frames.length > 0 && frames.every((frame) => /\/(red\/red(\.min)?\.js|vendor\/)/.test(frame) && !/eval at|<anonymous>/.test(frame));
}

/**
 * A real Node-RED and the editor open in Debian's chromium, driven by playwright-core: what a user
 * sees, at a window size of the test's choosing.
 */
export class Editor {
  private readonly consoleErrors: string[] = [];

  private constructor(
    readonly red: NodeRed,
    readonly page: Page,
    private readonly context: BrowserContext,
    private readonly profile: string,
  ) {}

  static async open(viewport: { width: number; height: number }, options: StartOptions = {}): Promise<Editor> {
    const red = await NodeRed.start(options);
    const profile = mkdtempSync(join(tmpdir(), 'cs-chromium-'));
    const context = await chromium.launchPersistentContext(profile, {
      executablePath: findChromium(),
      headless: true,
      viewport,
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
    const page = context.pages()[0] ?? (await context.newPage());
    const editor = new Editor(red, page, context, profile);
    page.on('console', (m) => {
      if (m.type() === 'error') editor.consoleErrors.push(m.text());
    });
    page.on('pageerror', (err) => {
      if (nodeRedOwnFault(err.stack)) console.log(`# the editor: a fault inside Node-RED's own editor code, not counted: ${err.stack}`);
      else editor.consoleErrors.push(`page error: ${err.message}`, `${err.stack}`);
    });
    await editor.load();
    return editor;
  }

  /** (Re)loads the editor and waits until every node type of the package and the sidebar are there. */
  async load(): Promise<void> {
    const types = await this.packageTypes();
    await this.page.goto(this.red.url('/'));
    await this.page.waitForFunction(
      (all) => {
        try {
          const R = window.RED;
          return (
            all.every((t: string) => !!R.nodes.getType(t)) &&
            R.sidebar.containsTab('channel-sessions-chat') &&
            !!document.querySelector('#red-ui-workspace-chart') &&
            R.nodes.workspace(R.workspaces.active())
          );
        } catch {
          return false;
        }
      },
      types,
      { timeout: 30000 },
    );
  }

  /** Every type the package registers, as the runtime lists them. */
  async packageTypes(): Promise<string[]> {
    const res = await this.red.admin('GET', '/nodes', undefined, { Accept: 'application/json' });
    if (res.status !== 200) throw new Error(`GET /nodes: ${res.status} ${res.text}`);
    const sets = (res.body as Array<{ module: string; types: string[]; err?: string }>).filter((s) => s.module === MODULE);
    const failed = sets.filter((s) => s.err);
    if (failed.length) throw new Error(`node sets failed to load: ${failed.map((s) => s.err).join('; ')}`);
    return sets.flatMap((s) => s.types);
  }

  /** Browser console errors since the last call. */
  takeErrors(): string[] {
    // Monaco's JSON mode throws this when a code editor closes while its own timers are pending,
    // on a busy machine; Node-RED's template node in JSON does the same. Not ours to fix.
    return this.consoleErrors.splice(0, this.consoleErrors.length).filter((e) => !/Model is disposed!/.test(e));
  }

  /** Imports an example the way Import > Examples does (the runtime's example library), into what the editor holds. */
  async importExample(name: string): Promise<{ count: number; error?: string }> {
    return this.page.evaluate(
      async ({ module, name }) => {
        const R = window.RED;
        const $ = window.$;
        const flows = await new Promise<any[]>((resolve, reject) => {
          $.ajax({
            url: `library/examples/flows/${module}/${encodeURIComponent(name)}`,
            dataType: 'json',
            success: resolve,
            error: (x: any) => reject(new Error(`${x.status}`)),
          });
        });
        try {
          R.view.importNodes(flows, { addFlow: false, touchImport: false, generateIds: false, notify: false });
        } catch (err: any) {
          return { count: flows.length, error: `${err.code ?? ''} ${err.message}` };
        }
        // The imported nodes follow the mouse until a click drops them, as after Import > Examples.
        R.view.redraw(true);
        return { count: flows.length };
      },
      { module: MODULE, name },
    );
  }

  /** Drops nodes that follow the mouse after an import. */
  async dropImported(): Promise<void> {
    const chart = (await this.page.locator('#red-ui-workspace-chart').boundingBox())!;
    await this.page.mouse.move(chart.x + 60, chart.y + 40);
    await this.page.mouse.click(chart.x + 60, chart.y + 40);
  }

  /** Deploys what the editor holds, the way the Deploy button does; resolves 'ok' or what went wrong. */
  deploy(): Promise<string> {
    return this.page.evaluate(
      () =>
        new Promise<string>((resolve) => {
          const R = window.RED;
          const invalid = R.nodes
            .filterNodes({})
            .filter((n: any) => n.valid === false)
            .map((n: any) => `${n.type} ${n.id}`);
          if (invalid.length) return resolve(`invalid nodes: ${invalid.join(', ')}`);
          const timer = setTimeout(() => resolve('no deploy event within 10 s'), 10000);
          R.events.on('deploy', function done() {
            clearTimeout(timer);
            R.events.off('deploy', done);
            resolve('ok');
          });
          R.actions.invoke('core:deploy-flows');
        }),
    );
  }

  async screenshot(name: string): Promise<void> {
    if (!SCREENSHOTS) return;
    mkdirSync(SCREENSHOTS, { recursive: true });
    await this.page.screenshot({ path: join(SCREENSHOTS, name) });
  }

  async close(): Promise<void> {
    await this.context.close().catch(() => undefined);
    rmSync(this.profile, { recursive: true, force: true });
    await this.red.close();
  }
}
