import type { ChannelBehaviour, TaskContext } from '../engine/behaviour';
import type { Effect } from '../engine/effects';
import { TaskError } from '../model/errors';
import { resolveAttachments } from '../files/attachments';
import { resolvePlaceholders } from '../model/placeholders';
import type { SessionRecord } from '../model/session';
import { conversationKey } from './conversation';
import type { TeamChatEnvironment, TeamChatEnvironments } from './environment';
import { escapeSlackText } from './escape';
import { TEAMCHAT_CHANNEL, type TeamChatBinding } from './inbound';
import { rememberPost } from './posted';
import { postText, uploadFiles, type PostTarget } from './posting';

/** Where a team-chat Session replies. */
export interface Conversation {
  env: TeamChatEnvironment;
  target: PostTarget;
  /** Threads are on but the Session has none yet (started by the start endpoint): its first post opens it. */
  opensThread: boolean;
}

/** The Environment and conversation a team-chat Session replies to; 4012 when it has none. */
export function conversationOf(environments: TeamChatEnvironments, session: SessionRecord): Conversation {
  const binding = session.binding as Partial<TeamChatBinding>;
  const env = environments.get(session.environment);
  if (!env || typeof binding.channel !== 'string' || !binding.channel) {
    throw new TaskError(4012, `Session ${session.id} is not bound to a team-chat conversation of a deployed Environment`);
  }
  const threadTs = env.settings.useThreads && binding.thread ? binding.thread : undefined;
  return { env, target: { channel: binding.channel, ...(threadTs ? { threadTs } : {}) }, opensThread: env.settings.useThreads && !binding.thread };
}

/**
 * Posts text (and blocks: a Block message) in the Session's conversation; a Session that began
 * without a thread replies from then on under this first post.
 */
export async function postInConversation(
  session: SessionRecord,
  conversation: Conversation,
  text: string,
  blocks: unknown[] | undefined,
  effect: Effect,
): Promise<void> {
  const { ts, channel } = await postText(conversation.env, conversation.target, text, blocks, effect);
  takeChannelId(session, conversation, channel);
  rememberPost(session, channel, ts);
  if (!conversation.opensThread || !ts) return;
  (session.binding as Partial<TeamChatBinding>).thread = ts;
  // In PerThread mode the replies in this new thread are the conversation from now on.
  if (conversation.env.settings.sessionMode === 'PerThread') session.key = conversationKey('PerThread', { channel, user: '', threadTs: ts });
  conversation.target.threadTs = ts;
  conversation.opensThread = false;
}

/**
 * A Session bound to a channel by its name, or to a user id (Message first's channel), is bound
 * from its first post on to the id Slack's answer names: replies and clicks carry that id, and an
 * upload takes nothing else.
 */
function takeChannelId(session: SessionRecord, conversation: Conversation, channel: string): void {
  if (channel === conversation.target.channel) return;
  (session.binding as Partial<TeamChatBinding>).channel = channel;
  conversation.target.channel = channel;
}

/**
 * OutputTask, InputTask and EndTask on TeamChatChannel. Substituted values are escaped, so what a
 * person typed is posted literally; files go below the message in the same thread.
 */
export function teamchatBehaviour(environments: TeamChatEnvironments): ChannelBehaviour {
  return {
    channel: TEAMCHAT_CHANNEL,

    async output(task: TaskContext, template: string, attachments: string) {
      const conversation = conversationOf(environments, task.session);
      const { env } = conversation;
      const client = env.client();
      const files = await resolveAttachments(attachments, task.msg.vars, task.files);
      if (files.length) await env.requireScope('files:write', 'Attachments');
      const posted = resolvePlaceholders(template, task.msg.vars, escapeSlackText);
      if (!posted.trim() && !files.length) throw new TaskError(3005, 'Output Message is empty and there are no Attachments: nothing to post');
      if (posted.trim()) await postInConversation(task.session, conversation, posted, undefined, task.effect);
      if (files.length) await uploadFiles(client, conversation.target, files, task.effect);
      return { text: resolvePlaceholders(template, task.msg.vars), files: files.map((f) => f.name) };
    },

    async prompt(task: TaskContext, template: string, input: { filesVariable?: string }) {
      const conversation = conversationOf(environments, task.session);
      if (input.filesVariable) await conversation.env.requireScope('files:read', 'Store files in');
      const posted = resolvePlaceholders(template, task.msg.vars, escapeSlackText);
      if (posted.trim()) await postInConversation(task.session, conversation, posted, undefined, task.effect);
      return { text: resolvePlaceholders(template, task.msg.vars) };
    },

    async end() {
      // EndTask posts nothing; the engine releases the conversation.
    },

    sessionEnded(session: SessionRecord) {
      // A status Set status keeps up in the thread stops with its Session.
      const binding = session.binding as Partial<TeamChatBinding>;
      if (binding.channel && binding.thread) environments.get(session.environment)?.statuses.stop(binding.channel, binding.thread);
    },
  };
}
