import type { HumanMessage, MessageKind } from './message-event';
import type { SessionMode, TeamChatSettings } from './settings';

/**
 * The conversation a message belongs to, by Session Mode: a top-level message and its thread
 * (PerThread), a whole channel or direct-message conversation (PerChannel), or one user in a
 * channel (PerUserPerChannel).
 */
export function conversationKey(mode: SessionMode, where: { channel: string; user: string; ts?: string; threadTs?: string }): string {
  switch (mode) {
    case 'PerChannel':
      return where.channel;
    case 'PerUserPerChannel':
      return `${where.channel}/${where.user}`;
    default:
      return `${where.channel}/${where.threadTs || where.ts || ''}`;
  }
}

/** Start-sessions-from: whether a message with no live Session may open one (a live one is always continued). */
export function mayStart(settings: TeamChatSettings, kind: MessageKind): boolean {
  if (kind === 'direct') return settings.startFromDirect;
  if (kind === 'mention') return settings.startFromMention || settings.startFromChannel;
  return settings.startFromChannel;
}

/** Where replies go: the message's thread, or the message itself. */
export function replyThread(message: Pick<HumanMessage, 'ts' | 'threadTs'>): string {
  return message.threadTs || message.ts;
}

/** A conversation's id as Slack writes it (a public or private channel, a direct message), not a channel's name. */
export function isConversationId(channel: string): boolean {
  return /^[CDG][A-Z0-9]+$/.test(channel);
}
