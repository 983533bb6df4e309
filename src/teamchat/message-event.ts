import type { AppIdentity } from './slack-api';

/** A file as Slack describes it in a message event. */
export interface SlackFile {
  id?: string;
  name?: string;
  title?: string;
  mimetype?: string;
  size?: number;
  mode?: string;
  is_external?: boolean;
  file_access?: string;
  url_private?: string;
  url_private_download?: string;
}

/** How a message may open a Session (the Environment's Start-sessions-from). */
export type MessageKind = 'direct' | 'mention' | 'channel';

/** A message a person wrote, as the module needs it. */
export interface HumanMessage {
  kind: MessageKind;
  channel: string;
  user: string;
  team: string;
  /** Slack's text as sent (escaped, with mentions). */
  text: string;
  ts: string;
  threadTs?: string;
  files: SlackFile[];
}

/** Slackbot's user id, the same in every workspace. */
const SLACKBOT = 'USLACKBOT';

/** Subtypes a person produces; every other subtype is a join, an edit, a deletion, a bot or the like. */
const HUMAN_SUBTYPES: ReadonlySet<string> = new Set(['file_share', 'thread_broadcast']);

/**
 * Reads a message or app_mention event. Bot messages (the app's own included), edits,
 * deletions, joins and other non-human subtypes give a reason to ignore them instead. With the
 * app's identity unknown (`{}`), its own message and a channel message naming it are left for
 * `withIdentity` to tell.
 */
export function readMessageEvent(event: Record<string, any>, envelopeTeam: string, app: AppIdentity): HumanMessage | { ignored: string } {
  if (event.type !== 'message' && event.type !== 'app_mention') return { ignored: `event type ${event.type}` };
  if (event.subtype !== undefined && !HUMAN_SUBTYPES.has(event.subtype)) return { ignored: `subtype ${event.subtype}` };
  if (event.hidden) return { ignored: 'hidden message' };
  if (event.bot_id || event.bot_profile) return { ignored: 'written by a bot' };
  if (event.edited) return { ignored: 'an edit' };
  const user = typeof event.user === 'string' ? event.user : '';
  if (!user) return { ignored: 'no user' };
  // Slackbot writes as a user, with no bot_id and no subtype (reminders, automated replies).
  if (user === SLACKBOT) return { ignored: 'written by Slackbot' };
  const channel = typeof event.channel === 'string' ? event.channel : '';
  const ts = typeof event.ts === 'string' ? event.ts : '';
  if (!channel || !ts) return { ignored: 'no channel or ts' };
  const direct = event.channel_type === 'im' || channel.startsWith('D');
  const message: HumanMessage = {
    kind: direct ? 'direct' : event.type === 'app_mention' ? 'mention' : 'channel',
    channel,
    user,
    team: String(event.team ?? event.user_team ?? envelopeTeam ?? ''),
    text: typeof event.text === 'string' ? event.text : '',
    ts,
    threadTs: typeof event.thread_ts === 'string' && event.thread_ts ? event.thread_ts : undefined,
    files: Array.isArray(event.files) ? event.files : [],
  };
  return withIdentity(message, app);
}

/**
 * What only the app's identity tells of a message: its bot user's own (one without a bot_id) is
 * ignored, and a channel message naming the app is a mention. Unknown (`{}`), nothing is told.
 */
export function withIdentity(message: HumanMessage, app: AppIdentity): HumanMessage | { ignored: string } {
  if (!app.botUserId) return message;
  if (message.user === app.botUserId) return { ignored: "the app's own message" };
  if (message.kind === 'channel' && message.text.includes(`<@${app.botUserId}`)) return { ...message, kind: 'mention' };
  return message;
}

/** The kind a message may prove to be once the app's identity is known: a channel message naming anyone may be naming the app. */
export function possibleKind(message: HumanMessage): MessageKind {
  return message.kind === 'channel' && /<@[UW]/.test(message.text) ? 'mention' : message.kind;
}
