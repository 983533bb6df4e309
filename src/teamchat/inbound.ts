import type { Engine } from '../engine/engine';
import { conversationKey, mayStart, replyThread } from './conversation';
import type { TeamChatEnvironment } from './environment';
import { unescapeSlackText, withoutMention } from './escape';
import { incomingFiles } from './inbound-files';
import type { HumanMessage } from './message-event';
import type { AppIdentity } from './slack-api';
import { teamchatOpening } from './start-kind';

export const TEAMCHAT_CHANNEL = 'TeamChatChannel' as const;

/** Where a team-chat Session replies, kept on the Session (`session.binding`). */
export interface TeamChatBinding {
  channel: string;
  /** The thread of the message that started the Session (or that message itself). */
  thread: string;
  user: string;
  team: string;
}

/**
 * Hands a person's message to its conversation: it continues the live Session, or opens one when
 * Start-sessions-from allows its kind. Resolves true when a Session took it.
 */
export async function deliverMessage(engine: Engine, env: TeamChatEnvironment, message: HumanMessage, app: AppIdentity): Promise<boolean> {
  const key = threadOwner(engine, env, message) ?? conversationKey(env.settings.sessionMode, message);
  const allowed = mayStart(env.settings, message.kind);
  const live = engine.liveSessionFor(env.id, key);
  if (!live && !allowed) return false;
  const text = unescapeSlackText(withoutMention(message.text, app.botUserId, message.kind === 'mention'));
  const files = incomingFiles(message.files, env.botToken, env.fileOrigins());
  const thread = replyThread(message);
  const opening = !live;
  const profileName = opening ? await profileNameOf(env, message.user) : '';
  const canReadFiles = opening && files.length ? await env.hasScope('files:read') : false;
  const binding: TeamChatBinding = { channel: message.channel, thread, user: message.user, team: message.team };
  const outcome = await engine.deliver({
    environment: env.id,
    channel: TEAMCHAT_CHANNEL,
    key,
    message: { text, files },
    mayStart: allowed,
    binding: binding as unknown as Record<string, unknown>,
    keepOpeningFiles: canReadFiles,
    opening: (session, kept) => {
      if (files.length && !canReadFiles) {
        engine.addLog(session, { level: 'warn', code: 4022, message: `${files.length} file(s) not kept: the bot token lacks the files:read scope` });
      }
      return teamchatOpening({
        text, files: kept, from: message.user, profileName, to: message.channel, team: message.team,
        thread, messageId: message.ts, channel: TEAMCHAT_CHANNEL, isTest: false,
      });
    },
  });
  return outcome.kind !== 'ignored';
}

/**
 * A Session started with no thread (start endpoint) opens its thread with its first post; in
 * PerThread mode, replies in that thread belong to it although their key names the new thread.
 */
function threadOwner(engine: Engine, env: TeamChatEnvironment, message: HumanMessage): string | undefined {
  if (env.settings.sessionMode !== 'PerThread' || !message.threadTs) return undefined;
  if (engine.liveSessionFor(env.id, conversationKey('PerThread', message))) return undefined;
  const owner = engine.liveSessions().find((s) => {
    const binding = s.binding as Partial<TeamChatBinding>;
    return s.environment === env.id && s.channel === TEAMCHAT_CHANNEL && binding.channel === message.channel && binding.thread === message.threadTs;
  });
  return owner?.key;
}

/** The display name, only when the token may read users (`users:read`); otherwise empty. */
async function profileNameOf(env: TeamChatEnvironment, user: string): Promise<string> {
  if (!(await env.grantedScope('users:read'))) return '';
  try {
    const res = await env.client().users.info({ user });
    const u = res.user;
    return u?.profile?.display_name || u?.profile?.real_name || u?.real_name || u?.name || '';
  } catch (err) {
    env.node.debug(`users.info failed: ${(err as Error).message}`);
    return '';
  }
}
