import type { SessionRecord } from '../model/session';

/**
 * The Slack messages a Session posted, kept on its binding (saved and restored with it) so a
 * click can be matched to the Session whose message it is on. Only the latest are kept: a click
 * on a much older message of a long conversation is treated as a click on someone else's.
 */
export const POSTED_KEPT = 50;

interface WithPosts {
  posted?: string[];
}

export function rememberPost(session: SessionRecord, channel: string, ts: string): void {
  if (!channel || !ts) return;
  const binding = session.binding as WithPosts;
  const posted = Array.isArray(binding.posted) ? binding.posted : [];
  posted.push(`${channel}/${ts}`);
  if (posted.length > POSTED_KEPT) posted.splice(0, posted.length - POSTED_KEPT);
  binding.posted = posted;
}

export function posted(session: SessionRecord, channel: string, ts: string): boolean {
  const list = (session.binding as WithPosts).posted;
  return Array.isArray(list) && list.includes(`${channel}/${ts}`);
}
