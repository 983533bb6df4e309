import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Editor } from './browser';
import { REPO_ROOT, eventually } from './node-red';

// Code in page.evaluate runs in the browser; the tests compile without the DOM library.
declare const window: any;

export type ExampleFlow = Array<Record<string, unknown> & { id: string; type: string }>;

/** An example as the palette's Import offers it, from examples/. */
export const example = (name: string) => JSON.parse(readFileSync(join(REPO_ROOT, 'examples', `${name}.json`), 'utf8')) as ExampleFlow;
export const tabOf = (flow: ExampleFlow) => flow.find((n) => n.type === 'tab')!.id;
export const idOf = (flow: ExampleFlow, type: string) => flow.find((n) => n.type === type)!.id;

/**
 * The Test chat in the editor's sidebar as a person reads and drives it: the Session it shows,
 * the lines of its conversation, where it waits, and its Start/Restart button.
 */
export class TestChatPage {
  constructor(private readonly editor: Editor) {}

  private get page() {
    return this.editor.page;
  }

  show(): Promise<void> {
    return this.page.evaluate(() => window.RED.actions.invoke('channel-sessions:show-test-chat'));
  }

  /** Opens a flow tab; the chat follows it to that tab's Process. */
  async openFlowTab(id: string): Promise<void> {
    await this.page.evaluate((id) => window.RED.workspaces.show(id), id);
    await eventually(async () => (await this.page.inputValue('#cs-chat-process')) === id, 5000, `the Test chat on flow tab ${id}`);
  }

  sessionId(): Promise<string | null> {
    return this.page.getAttribute('#cs-chat-state', 'data-session');
  }

  /** The bubbles of the conversation, in the order shown. */
  transcript(): Promise<string[]> {
    return this.page.$$eval('#cs-chat-transcript .cs-line .cs-bubble', (els) => els.map((e: any) => e.textContent.trim()));
  }

  /** Waits until the chat says the Session waits at the node named; the failure says what it shows instead. */
  waitingAt(node: string): Promise<void> {
    return this.page
      .waitForFunction((node) => window.$('#cs-chat-state').attr('data-state') === 'waiting' && window.$('#cs-chat-state').text().includes(node), node, {
        timeout: 15000,
      })
      .then(
        () => undefined,
        async (err: Error) => {
          const shown = await this.page.evaluate(() => [
            window.$('#cs-chat-state').attr('data-state'),
            window.$('#cs-chat-state').text(),
            window.$('#cs-chat-process').val(),
          ]);
          throw new Error(`${err.message}; the chat shows ${JSON.stringify(shown)}: ${JSON.stringify(await this.transcript())}`);
        },
      );
  }

  /** Start (or Restart): resolves once the chat shows the new Session. */
  async start(): Promise<void> {
    const before = await this.sessionId();
    await this.page.click('#cs-chat-start-session');
    await this.page.waitForFunction((before) => {
      const id = window.$('#cs-chat-state').attr('data-session');
      return id && id !== before;
    }, before);
  }
}
