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
 * deletions, joins and other non-human subtypes give a reason to ignore them instead.
 */
export function readMessageEvent(event: Record<string, any>, envelopeTeam: string, app: AppIdentity): HumanMessage | { ignored: string } {
  if (event.type !== 'message' && event.type !== 'app_mention') return { ignored: `event type ${event.type}` };
  if (event.subtype !== undefined && !HUMAN_SUBTYPES.has(event.subtype)) return { ignored: `subtype ${event.subtype}` };
  if (event.hidden) return { ignored: 'hidden message' };
  if (event.bot_id || event.bot_profile) return { ignored: 'written by a bot' };
  if (event.edited) return { ignored: 'an edit' };
  const user = typeof event.user === 'string' ? event.user : '';
  if (!user) return { ignored: 'no user' };
  if (app.botUserId && user === app.botUserId) return { ignored: "the app's own message" };
  // Slackbot writes as a user, with no bot_id and no subtype (reminders, automated replies).
  if (user === SLACKBOT) return { ignored: 'written by Slackbot' };
  const channel = typeof event.channel === 'string' ? event.channel : '';
  const ts = typeof event.ts === 'string' ? event.ts : '';
  if (!channel || !ts) return { ignored: 'no channel or ts' };
  const text = typeof event.text === 'string' ? event.text : '';
  const mentionsApp = event.type === 'app_mention' || (!!app.botUserId && text.includes(`<@${app.botUserId}`));
  const direct = event.channel_type === 'im' || channel.startsWith('D');
  return {
    kind: direct ? 'direct' : mentionsApp ? 'mention' : 'channel',
    channel,
    user,
    team: String(event.team ?? event.user_team ?? envelopeTeam ?? ''),
    text,
    ts,
    threadTs: typeof event.thread_ts === 'string' && event.thread_ts ? event.thread_ts : undefined,
    files: Array.isArray(event.files) ? event.files : [],
  };
}
