import { TaskError } from '../../model/errors';
import { resolveAttachments } from '../../files/attachments';
import { resolvePlaceholders } from '../../model/placeholders';
import type { RED, RedNode } from '../../model/red';
import type { TeamChatModule } from '../teamchat-module';
import { runTask } from '../../kit/task-runner';
import { readField } from '../../kit/typed-field';
import { environmentFor } from '../environment';
import { escapeSlackText } from '../escape';
import { TEAMCHAT_CHANNEL } from '../inbound';
import { postText, uploadFiles } from '../posting';
import { runtimeText } from '../../model/texts';

export interface NotificationConfig {
  environment?: string;
  channel?: string;
  /** `str` (or absent, in flows saved before typed inputs) or msg/flow/global/env. */
  channelType?: string;
  message?: string;
  messageType?: string;
  attachments?: string;
}

/**
 * TeamChatNotification: a one-way post to a channel from any flow, no Session needed. Not
 * threaded, not waiting, not in the history. Placeholders read `msg.vars`, or the message itself
 * in a flow that carries no Session variables.
 */
export function notificationTask(red: RED, teamchat: TeamChatModule, node: RedNode, config: NotificationConfig): void {
  const { engine } = teamchat;
  node.on('input', (msg, send, done) => {
    runTask(
      engine,
      node,
      msg,
      send,
      done,
      async (session) => {
        const vars = (msg.vars ?? msg ?? {}) as Record<string, unknown>;
        const env = environmentFor(teamchat.environments, config.environment, session?.environment);
        // A message read from msg/flow/global/env is the author's own formatted text, like the field: not escaped.
        const text = await readField(red, node, msg, config.message, config.messageType, (t) => resolvePlaceholders(t, vars, escapeSlackText));
        if (!text.trim()) throw new TaskError(3005, 'Message is empty');
        const named = await readField(red, node, msg, config.channel, config.channelType, (t) => resolvePlaceholders(t, vars));
        const channel = named.trim() || env?.settings.defaultChannel || '';
        // In the Test chat a post shows in the chat, and nothing leaves the machine, when the test plays
        // Slack or when it could not reach Slack anyway (no channel yet, no Bot Token): an example runs
        // every path with no account, and the chat says where the post would go.
        if (session?.isTest && (session.channel === TEAMCHAT_CHANNEL || !channel || !env?.botToken)) {
          const where = channel || runtimeText(red, 'teamchat', 'runtime.status.noChannelYet');
          const files = await resolveAttachments(config.attachments, vars, engine.files);
          const names = files.map((f) => f.name);
          engine.addHistory(session, { from: 'bot', kind: 'post', text: text, detail: { channel: where }, ...(names.length ? { files: names } : {}) });
          node.status({ fill: 'grey', shape: 'dot', text: runtimeText(red, 'teamchat', 'runtime.status.shownInTestChat', { channel: where }) });
          return { next: 'output' };
        }
        if (!channel) throw new TaskError(3005, 'No Channel and the Environment has no Default Channel');
        if (!env) throw new TaskError(4008, 'No team-chat Environment: select one in the node');
        const files = await resolveAttachments(config.attachments, vars, engine.files);
        const client = env.client();
        if (files.length) await env.requireScope('files:write', 'Attachments');
        const effect = engine.effectFor(session);
        const posted = await postText(env, { channel }, text, undefined, effect);
        try {
          // Below the message, in the conversation Slack's answer named by id: a name is no upload's channel.
          await uploadFiles(client, { channel: posted.channel }, files, effect);
        } catch (err) {
          const failure = err instanceof TaskError ? err : new TaskError(4001, String(err));
          throw new TaskError(failure.code, `The message was posted, but the files failed: ${failure.message}`);
        }
        node.status({ fill: 'green', shape: 'dot', text: runtimeText(red, 'teamchat', 'runtime.status.posted', { channel }) });
        return { next: 'output' };
      },
      { needsSession: false },
    );
  });
}
