import type { Engine, InboundReader } from '../engine/engine';
import { conversationKey, mayStart, replyThread } from './conversation';
import type { TeamChatEnvironment, TeamChatEnvironments } from './environment';
import { unescapeSlackText, withoutMention } from './escape';
import { incomingFiles } from './inbound-files';
import { possibleKind, withIdentity, type HumanMessage } from './message-event';
import type { AppIdentity } from './slack-api';
import { teamchatOpening, type TeamChatOpening } from './starts';

export const TEAMCHAT_CHANNEL = 'TeamChatChannel' as const;
export const MESSAGE_KIND = 'teamchat-message';

/** Slack retries for about 5 minutes; an hour covers every retry and the other copy of a mention. */
const MESSAGE_KEPT_MS = 60 * 60 * 1000;

/** Where a team-chat Session replies, kept on the Session (`session.binding`). */
export interface TeamChatBinding {
  channel: string;
  /** The thread of the message that started the Session (or that message itself). */
  thread: string;
  user: string;
  team: string;
}

/** What is recorded for a person's message: enough to handle it after a restart. */
interface RecordedMessage {
  message: HumanMessage;
  /** The app's bot user; absent when it was not known yet (the step then reads the message with it). */
  botUserId?: string;
}

/**
 * Records a person's message for its conversation, once per message: Slack's retries and the
 * two copies of a mention (app_mention and message, same channel and ts) share one dedupe key. A
 * message that can neither continue a Session nor start one is not recorded (the other copy of a
 * mention may still start one). Resolves once it is durably recorded, so the event can be
 * acknowledged; rejects when the store cannot record it (the route answers 503, Slack retries).
 * `app` is the app's identity when auth.test has answered; without it a channel message naming
 * someone is kept as a possible mention, and its step decides.
 */
export async function recordMessage(engine: Engine, env: TeamChatEnvironment, message: HumanMessage, app: AppIdentity | undefined): Promise<void> {
  const key = conversationKey(env.settings.sessionMode, message);
  const kind = app ? message.kind : possibleKind(message);
  if (!mayStart(env.settings, kind) && !(await mayContinue(engine, env.id, key))) {
    env.node.debug(`message ${message.ts} in ${message.channel} starts nothing (Start-sessions-from) and has no Session to continue`);
    return;
  }
  const payload: RecordedMessage = { message, botUserId: app?.botUserId };
  const accepted = await engine.accept({
    environment: env.id,
    conversation: key,
    kind: MESSAGE_KIND,
    payload,
    dedupe: { key: `teamchat/${env.id}/${message.channel}/${message.ts}`, ttlMs: MESSAGE_KEPT_MS },
  });
  if (accepted === 'duplicate') env.node.debug(`message ${message.ts} in ${message.channel} already recorded; handled once`);
}

/**
 * Whether a message that may not start a Session may continue one: its conversation has a live
 * Session, or an item not yet handled whose step may open one (a mention whose step still waits
 * for users.info, maybe out a 429's Retry-After; one recorded while the flows restart, or that
 * another instance handles). Dropped then, a reply that came before its Session was live would be
 * acknowledged and lost; recorded behind that item, its own step continues the Session, or drops
 * it when none was opened. The second read is only for such messages without a live Session.
 */
async function mayContinue(engine: Engine, environment: string, key: string): Promise<boolean> {
  return (await engine.liveSessionFor(environment, key)) !== undefined || engine.hasUnhandledItem(environment, key);
}

/** A recorded message, read back inside its conversation's step: it continues the live Session or opens one. */
export function messageReader(
  engine: Engine,
  environments: TeamChatEnvironments,
  contextOf: (environment: string, channel: string, thread: string) => TeamChatOpening['context'],
): InboundReader {
  return async (item, live) => {
    const env = environments.get(item.environment);
    if (!env) return undefined;
    const recorded = item.payload as RecordedMessage;
    const read = await identified(env, recorded);
    if ('ignored' in read) {
      env.node.debug(`message ${recorded.message.ts} in ${recorded.message.channel} ignored: ${read.ignored}`);
      return undefined;
    }
    const { message, botUserId } = read;
    const allowed = mayStart(env.settings, message.kind);
    if (!live && !allowed) return undefined;
    const text = unescapeSlackText(withoutMention(message.text, botUserId, message.kind === 'mention'));
    const files = incomingFiles(message.files, env.botToken, env.fileOrigins());
    const thread = replyThread(message);
    const profileName = live ? '' : await profileNameOf(env, message.user);
    const canReadFiles = !live && files.length ? await env.hasScope('files:read') : false;
    const binding: TeamChatBinding = { channel: message.channel, thread, user: message.user, team: message.team };
    return {
      channel: TEAMCHAT_CHANNEL,
      // A typed reply leaves no `<variable>_action` of an earlier click behind.
      message: { text, files, answerFields: { action: undefined } },
      mayStart: allowed,
      binding: binding as unknown as Record<string, unknown>,
      keepOpeningFiles: canReadFiles,
      opening: (session, kept) => {
        if (files.length && !canReadFiles) {
          engine.addLog(session, { level: 'warn', code: 4022, message: `${files.length} file(s) not kept: the bot token lacks the files:read scope` });
        }
        return teamchatOpening({
          text,
          files: kept,
          from: message.user,
          profileName,
          to: message.channel,
          team: message.team,
          thread,
          messageId: message.ts,
          channel: TEAMCHAT_CHANNEL,
          isTest: false,
          ...contextIn(contextOf(env.id, message.channel, thread)),
        });
      },
    };
  };
}

/**
 * The recorded message as the app's identity reads it. One recorded before auth.test had answered
 * is read again here, where waiting for it keeps no acknowledgement waiting: the app's own message
 * is ignored, so it never answers an InputTask nor opens a Session, and a channel message naming
 * the app is a mention.
 */
async function identified(env: TeamChatEnvironment, recorded: RecordedMessage): Promise<RecordedMessage | { ignored: string }> {
  if (recorded.botUserId) return recorded;
  const app = await env.identity();
  const message = withIdentity(recorded.message, app);
  return 'ignored' in message ? message : { message, botUserId: app.botUserId };
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

/** `{teamchat.context}` only in an assistant thread, whose context Slack told. */
function contextIn(context: TeamChatOpening['context']): { context?: TeamChatOpening['context'] } {
  return context ? { context } : {};
}
