import { TaskError } from '../../model/errors';
import { resolvePlaceholders } from '../../model/placeholders';
import type { RED, RedNode } from '../../model/red';
import type { TeamChatModule } from '../teamchat-module';
import type { SessionRecord } from '../../model/session';
import { runTask } from '../../kit/task-runner';
import { readField } from '../../kit/typed-field';
import { buildBlocks } from '../blocks';
import { conversationOf, postInConversation } from '../behaviour';
import { environmentFor, type TeamChatEnvironment } from '../environment';
import { escapeSlackText } from '../escape';
import { TEAMCHAT_CHANNEL } from '../inbound';
import { rememberPost } from '../posted';
import { postText, type PostTarget } from '../posting';
import { runtimeText } from '../../model/texts';

export interface BlockMessageConfig {
  environment?: string;
  channel?: string;
  /** `str` (or absent, in flows saved before typed inputs) or msg/flow/global/env. */
  channelType?: string;
  notificationText?: string;
  blocks?: string;
}

const DEFAULT_NOTIFICATION = 'New message';

/**
 * TeamChatBlockMessage: posts Block Kit blocks. In a team-chat Session an empty Channel means the
 * conversation (its thread); anywhere else, the test chat included, the Default Channel.
 */
export function blockMessageTask(red: RED, teamchat: TeamChatModule, node: RedNode, config: BlockMessageConfig): void {
  const { engine } = teamchat;
  node.on('input', (msg, send, done) => {
    runTask(
      engine,
      node,
      msg,
      send,
      done,
      async (session) => {
        // In a flow without a Session, placeholders read the message itself ({payload}).
        const vars = (msg.vars ?? msg ?? {}) as Record<string, unknown>;
        const blocks = buildBlocks(config.blocks ?? '', vars);
        const plain = resolvePlaceholders(config.notificationText, vars).trim() || DEFAULT_NOTIFICATION;
        const notification = resolvePlaceholders(config.notificationText, vars, escapeSlackText).trim() || DEFAULT_NOTIFICATION;
        const named = (await readField(red, node, msg, config.channel, config.channelType, (text) => resolvePlaceholders(text, vars))).trim();
        if (session?.isTest && session.channel === TEAMCHAT_CHANNEL) {
          // The Test chat playing Slack: the card shows in the chat with clickable buttons, nothing is posted.
          const where = named || 'the conversation';
          engine.addHistory(session, { from: 'bot', kind: 'blocks', text: plain, detail: blocks });
          node.status({ fill: 'grey', shape: 'dot', text: runtimeText(red, 'teamchat', 'runtime.status.shownInTestChat', { channel: where }) });
          return { next: 'output' };
        }
        const channel = await postBlocks(teamchat, config, named, session, notification, blocks);
        // The conversation's history (and the test chat's transcript); a call or an SMS never saw it.
        if (session && (session.channel === TEAMCHAT_CHANNEL || session.isTest)) {
          engine.addHistory(session, { from: 'bot', kind: 'blocks', text: plain, detail: blocks });
        }
        node.status({ fill: 'green', shape: 'dot', text: runtimeText(red, 'teamchat', 'runtime.status.posted', { channel }) });
        return { next: 'output' };
      },
      { needsSession: false },
    );
  });
}

/**
 * Posts the blocks and resolves to the channel they went to. With an empty Channel in a team-chat
 * Session they go in its conversation as its other posts do, so a Session's first post (after
 * Message first) opens its thread; otherwise to the channel given, or the Default Channel, outside
 * any thread.
 */
async function postBlocks(
  teamchat: TeamChatModule,
  config: BlockMessageConfig,
  named: string,
  session: SessionRecord | undefined,
  notification: string,
  blocks: unknown[],
): Promise<string> {
  if (!named && session?.channel === TEAMCHAT_CHANNEL) {
    const conversation = conversationOf(teamchat.environments, session);
    await postInConversation(session, conversation, notification, blocks, teamchat.engine.effectFor(session));
    return conversation.target.channel;
  }
  const { env, target } = whereToPost(teamchat, config, named, session);
  const posted = await postText(env, target, notification, blocks, teamchat.engine.effectFor(session));
  // Its buttons answer this Session's InputTask (answer-click.ts); a click names the channel by id, never by a name it was posted to.
  if (session?.channel === TEAMCHAT_CHANNEL) rememberPost(session, posted.channel, posted.ts);
  return target.channel;
}

function whereToPost(
  teamchat: TeamChatModule,
  config: BlockMessageConfig,
  named: string,
  session: SessionRecord | undefined,
): { env: TeamChatEnvironment; target: PostTarget } {
  const env = environmentFor(teamchat.environments, config.environment, session?.environment);
  if (!env) throw new TaskError(4008, 'No team-chat Environment: select one in the node');
  if (named) return { env, target: { channel: named } };
  if (!env.settings.defaultChannel) {
    throw new TaskError(4012, `No channel to post to: the Channel is empty and Environment "${env.name}" has no Default Channel`);
  }
  return { env, target: { channel: env.settings.defaultChannel } };
}
