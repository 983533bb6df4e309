import { textOf } from '../../model/text';
import { TaskError } from '../../model/errors';
import { resolvePlaceholders } from '../../model/placeholders';
import type { RED, RedNode } from '../../model/red';
import { bareVariable } from '../../kit/start-node';
import { runTask } from '../../kit/task-runner';
import { registerWaitingTask } from '../../kit/waiting-task';
import { readField } from '../../kit/typed-field';
import type { MessagingModule } from '../messaging-module';
import { sendContext } from '../behaviour';
import { send } from '../outbound';
import { runtimeText } from '../../model/texts';

export interface ButtonsConfig {
  contentSid?: string;
  /** `str` (or absent, in flows saved before typed inputs) or msg/flow/global/env. */
  contentSidType?: string;
  variables?: Array<{ index?: unknown; value?: unknown }> | string;
  previewText?: string;
  resultVariable?: string;
}

/** A template id: `HX` followed by 32 characters. */
export const CONTENT_SID = /^HX[0-9A-Za-z]{32}$/;

/** The data the inbound route hands over with a message (a tapped quick-reply button). */
export interface MessageData {
  button?: { payload: string; text: string };
}

/**
 * TelcoMessengerButtonsTask: sends a quick-reply template on the messenger Channel, then waits;
 * the answer goes into `{choice}`. In the test chat it shows the preview text instead.
 */
export function buttonsTask(red: RED, node: RedNode, config: ButtonsConfig, messaging: MessagingModule): void {
  const { engine } = messaging;
  const resultVariable = bareVariable(config.resultVariable) || 'choice';

  node.on('input', (msg, send_, done) => {
    runTask(engine, node, msg, send_, done, async (session) => {
      const preview = resolvePlaceholders(config.previewText, msg.vars).trim();
      const contentSid = (await readField(red, node, msg, config.contentSid, config.contentSidType, (t) => resolvePlaceholders(t, msg.vars))).trim();
      // The Test chat on Chat or playing WhatsApp: the preview with its [labels] as buttons to tap
      // (the template itself is the provider's); on SMS it refuses below, as a real SMS Session does.
      if (session.isTest && (session.channel === 'Chat' || session.channel === 'TelcoMessagingMessenger')) {
        const buttons = previewButtons(preview);
        engine.addHistory(session, {
          from: 'bot',
          kind: 'buttons',
          text: preview || templateLabel(contentSid),
          detail: { contentSid, ...(buttons.length ? { buttons } : {}) },
        });
        node.status({ text: runtimeText(red, 'messaging', 'runtime.status.previewShown') });
        return { next: 'wait' };
      }
      if (session.channel !== 'TelcoMessagingMessenger') {
        throw new TaskError(3005, `Buttons need a messenger Session; this one is on ${session.channel} (give SMS users a text alternative)`);
      }
      if (!CONTENT_SID.test(contentSid)) {
        throw new TaskError(3005, `Content SID "${contentSid}" is not HX followed by 32 characters; nothing was sent`);
      }
      const variables = contentVariables(config.variables, msg.vars);
      const ctx = sendContext(messaging, engine.taskContext(session, msg, node), red.settings.httpNodeRoot);
      await send(ctx, [{ contentSid, ...(variables ? { contentVariables: variables } : {}) }]);
      engine.addHistory(session, { from: 'bot', kind: 'buttons', text: preview || templateLabel(contentSid), detail: { contentSid } });
      node.status({ fill: 'green', shape: 'dot', text: runtimeText(red, 'messaging', 'runtime.status.sent', { contentSid }) });
      return { next: 'wait' };
    });
  });

  registerWaitingTask(engine, node, {
    answered(_session, message, token) {
      const button = (message.data as MessageData | undefined)?.button;
      token.vars[resultVariable] = button
        ? { payload: button.payload, text: button.text, message: message.text, tapped: true }
        : { payload: message.text, text: message.text, message: message.text, tapped: false };
      node.send([token, null]);
    },
  });
}

/** The bracketed labels of a preview text ("Recommend us? [Yes] [No]"): the Test chat's buttons, at most ten as WhatsApp allows. */
export function previewButtons(preview: string): string[] {
  const labels = [...preview.matchAll(/\[([^[\]]{1,40})\]/g)].map((m) => m[1].trim()).filter(Boolean);
  return [...new Set(labels)].slice(0, 10);
}

/** Template variable rows as the provider's content variables JSON (`{"1": "Ann"}`); undefined when none. */
export function contentVariables(rows: ButtonsConfig['variables'], vars: Record<string, unknown>): string | undefined {
  let list: Array<{ index?: unknown; value?: unknown }> = [];
  if (Array.isArray(rows)) list = rows;
  else if (typeof rows === 'string' && rows.trim()) {
    try {
      const parsed = JSON.parse(rows);
      if (Array.isArray(parsed)) list = parsed;
    } catch {
      throw new TaskError(3005, 'Template variables are not a list of {index, value} rows');
    }
  }
  const out: Record<string, string> = {};
  for (const row of list) {
    const index = textOf(row.index).trim();
    if (!index) continue;
    out[index] = resolvePlaceholders(textOf(row.value), vars);
  }
  return Object.keys(out).length ? JSON.stringify(out) : undefined;
}

function templateLabel(contentSid: string): string {
  return `[Template ${contentSid || 'with buttons'}]`;
}
