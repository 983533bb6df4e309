import twilio from 'twilio';
import { MEDIA_PATH } from './environment';
import { providerError, type ProviderClient } from './provider-client';

/** At most this many messages a page, and this many pages, are read looking for one message. */
export const LOOKUP_PAGE_SIZE = 50;
export const LOOKUP_PAGES = 4;

/** The message a step sent, as the provider's list is searched for it. */
export interface SentMessage {
  from: string;
  to: string;
  body?: string;
  /** How many media it carried (their URLs are links made anew each time a step runs, so only their count is compared). */
  mediaCount?: number;
}

/** A message the provider has. */
export interface FoundMessage {
  sid: string;
  status: string;
}

interface ListedMessage {
  sid?: string;
  status?: string;
  body?: string;
  num_media?: string;
  date_created?: string;
}

/**
 * The message the provider made for `message` since the step began (`since`, ms since the epoch),
 * when it has one: the account's Messages list from that number to that person (`DateSent>`, which
 * Twilio filters by the day), then, read here, made no earlier than the step's second and the same
 * body and number of media. A message Twilio still queues has no date sent yet, and the day's list
 * may leave it out: when the day's list has none, the newest page without that filter is read too.
 * Undefined when none is. It throws when the provider cannot be asked (its refusal, a fault: a 4001
 * worded as a send's) or when more messages came since than it reads: the message's fate is
 * unknown, and it is sent again.
 *
 * Two messages of one step with the same body to the same person cannot be told apart: the search
 * finds the first one.
 */
export async function findTwilioMessage(client: ProviderClient, message: SentMessage, since: number): Promise<FoundMessage | undefined> {
  const from = Math.floor(since / 1000) * 1000;
  const list = `https://api.twilio.com/2010-04-01/Accounts/${client.accountSid}/Messages.json`;
  const pair = { To: message.to, From: message.from, PageSize: String(LOOKUP_PAGE_SIZE) };
  let uri = list;
  let params: Record<string, string> | undefined = { ...pair, 'DateSent>': new Date(since).toISOString().slice(0, 10) };
  let complete = false;
  for (let page = 0; page < LOOKUP_PAGES && !complete; page++) {
    const listed = await readPage(client, uri, params);
    const found = listed.messages.find((m) => sameMessage(m, message, from));
    if (found?.sid) return { sid: found.sid, status: found.status ?? '' };
    // Newest first: a page made wholly before the step began ends the search, as does the last page.
    const older = listed.messages.length > 0 && listed.messages.every((m) => !(Date.parse(m.date_created ?? '') >= from));
    if (older || !listed.next) complete = true;
    else {
      // The next page's URI carries the filters and Twilio's page token.
      uri = `https://api.twilio.com${listed.next}`;
      params = undefined;
    }
  }
  if (!complete) throw new Error(`more than ${LOOKUP_PAGES * LOOKUP_PAGE_SIZE} messages to ${message.to} since the step began; not read further`);
  const queued = (await readPage(client, list, pair)).messages.find((m) => sameMessage(m, message, from));
  return queued?.sid ? { sid: queued.sid, status: queued.status ?? '' } : undefined;
}

/** One page of the Messages list: its messages, and the next page's URI (a path) when there is one. */
async function readPage(
  client: ProviderClient,
  uri: string,
  params: Record<string, string> | undefined,
): Promise<{ messages: ListedMessage[]; next?: string }> {
  let response: { statusCode: number; body: unknown };
  try {
    response = (await client.request({ method: 'get', uri, ...(params ? { params } : {}) })) as typeof response;
    if (response.statusCode < 200 || response.statusCode >= 300) throw new twilio.RestException(response);
  } catch (err) {
    throw providerError(err, 'the Messages list request');
  }
  const listed = (typeof response.body === 'string' ? safeJson(response.body) : response.body) as
    { messages?: ListedMessage[]; next_page_uri?: string | null } | undefined;
  return { messages: Array.isArray(listed?.messages) ? listed.messages : [], ...(listed?.next_page_uri ? { next: listed.next_page_uri } : {}) };
}

function sameMessage(listed: ListedMessage, message: SentMessage, from: number): boolean {
  const created = Date.parse(listed.date_created ?? '');
  if (!(created >= from)) return false;
  if (withoutLinkTokens(listed.body ?? '') !== withoutLinkTokens(message.body ?? '')) return false;
  return Number(listed.num_media ?? 0) === (message.mediaCount ?? 0);
}

/**
 * A body with the token of each file link taken out: an SMS names its files by links
 * (`<name>: <public URL>`) that a step makes anew each time it runs, so the same message carries
 * another token when the step runs again.
 */
function withoutLinkTokens(body: string): string {
  return body
    .split(MEDIA_PATH)
    .map((part, i) => (i === 0 ? part : part.replace(/^[\w.-]+/, '')))
    .join(MEDIA_PATH);
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
