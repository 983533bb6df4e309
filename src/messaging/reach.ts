import { TaskError } from '../model/errors';
import { publicRouteUrl } from '../http/public-url';
import type { SessionRecord } from '../model/session';
import { isMessengerAddress, pairKey, type PairBinding } from './addresses';
import { STATUS_PATH, type MessagingEnvironment } from './environment';

/** The messenger lets a business send free-form messages only this long after the person's last message. */
export const MESSENGER_WINDOW_MS = 24 * 60 * 60 * 1000;
/** Message ids a Session keeps of what it sent, newest last: a status names one of them. */
export const SENT_KEPT = 20;
/**
 * How much of a message id a Session keeps: its last 10 characters (40 bits of its hex) tell a
 * Session's last 20 messages from any other message of the pair, and a status is signed, so none
 * can be made up to match. The whole ids (34 characters each) made up to 740 bytes of the record
 * that every step reads and writes, and that crosses the network twice per message on Redis.
 */
const SENT_ID_TAIL = 10;

/** The mark an inbound messenger message leaves in the store for its pair, kept for the window's length. */
export function windowKey(environment: string, user: string, ours: string): string {
  return `messenger-window/${environment}/${pairKey(user, ours)}`;
}

/**
 * Free-form messages (not a template) to a messenger user who has not written within 24 hours
 * are refused by the provider (an error 63016 in a later status): stopped here with 3005 before
 * anything is sent. The Session's own binding knows the last message of a person who wrote in
 * this Session (its step is not committed yet); the store's mark, one written in an earlier Session.
 */
export async function requireMessengerWindow(remembered: (key: string) => Promise<boolean>, session: SessionRecord, pair: PairBinding): Promise<void> {
  if (!isMessengerAddress(pair.user)) return;
  const last = Number(session.binding.lastInbound);
  if (Number.isFinite(last) && Date.now() - last < MESSENGER_WINDOW_MS) return;
  if (await remembered(windowKey(session.environment, pair.user, pair.ours))) return;
  throw new TaskError(
    3005,
    `${pair.user} has not written within 24 hours, so WhatsApp allows only an approved template now: send one first with the WhatsApp buttons Task, and free-form messages once the person answers; nothing was sent`,
  );
}

/** The URL the provider posts each status of a message to; undefined without a public base URL or token. */
export function statusCallbackUrl(env: MessagingEnvironment, httpNodeRoot: string | undefined): string | undefined {
  const token = env.credentials.token;
  return token ? publicRouteUrl(env.config.publicBaseUrl, httpNodeRoot, STATUS_PATH + token) : undefined;
}

/** Keeps (the tail of) the id of a message the Session sent, the last SENT_KEPT of them, so that its statuses find the Session. */
export function rememberSent(session: SessionRecord, sid: string | undefined): void {
  if (!sid) return;
  const sent = Array.isArray(session.binding.sent) ? (session.binding.sent as unknown[]).filter((s): s is string => typeof s === 'string') : [];
  sent.push(sid.slice(-SENT_ID_TAIL));
  session.binding.sent = sent.slice(-SENT_KEPT);
}

/** Whether the Session sent the message `sid`; a record written before the tails keeps whole ids. */
export function sentBySession(session: SessionRecord, sid: string): boolean {
  if (!Array.isArray(session.binding.sent) || !sid) return false;
  const sent = session.binding.sent as unknown[];
  return sent.includes(sid.slice(-SENT_ID_TAIL)) || sent.includes(sid);
}
