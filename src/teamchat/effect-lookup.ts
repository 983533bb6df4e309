import type { WebClient } from '@slack/web-api';
import type { EffectLookup } from '../engine/effects';
import { EFFECT_EVENT_TYPE } from './effect-metadata';
import { slackFailure } from './slack-api';

/** At most this many messages a page, and this many pages, are read looking for one post. */
export const LOOKUP_PAGE_SIZE = 200;
export const LOOKUP_PAGES = 5;

/**
 * Slack's clock and ours differ by a little: the search starts this long before the step began.
 * The key names the post, so reading a little more can never find the wrong one.
 */
const CLOCK_SLACK_MS = 60_000;

interface ListedMessage {
  ts?: string;
  metadata?: { event_type?: string; event_payload?: { key?: unknown } };
}

/**
 * The post that is effect `key`, when Slack has it: the messages of the conversation since the
 * step began (`since`, ms since the epoch) are read with their metadata, in a thread its replies
 * (`conversations.replies`), else the channel's own messages (`conversations.history`). Undefined
 * when none is the effect. It throws when Slack cannot be asked (a history scope missing: 4008,
 * the call failing: 4001) or when more messages came since than it reads (it cannot tell then):
 * the post's fate is unknown, and it is sent again.
 */
export async function findSlackEffect(
  client: WebClient,
  target: { channel: string; threadTs?: string },
  key: string,
  since: number,
): Promise<{ ts: string; channel: string } | undefined> {
  const method = target.threadTs ? 'conversations.replies' : 'conversations.history';
  const oldest = ((since - CLOCK_SLACK_MS) / 1000).toFixed(6);
  let cursor: string | undefined;
  for (let page = 0; page < LOOKUP_PAGES; page++) {
    let res: { messages?: ListedMessage[]; response_metadata?: { next_cursor?: string } };
    try {
      res = await client.apiCall(method, {
        channel: target.channel,
        ...(target.threadTs ? { ts: target.threadTs } : {}),
        oldest,
        include_all_metadata: true,
        limit: LOOKUP_PAGE_SIZE,
        ...(cursor ? { cursor } : {}),
      });
    } catch (err) {
      throw slackFailure(err, method);
    }
    const found = (res.messages ?? []).find((m) => isEffect(m, key));
    if (found?.ts) return { ts: found.ts, channel: target.channel };
    cursor = res.response_metadata?.next_cursor || undefined;
    if (!cursor) return undefined;
  }
  throw new Error(`${method}: more than ${LOOKUP_PAGES * LOOKUP_PAGE_SIZE} messages since the step began; not read further`);
}

function isEffect(message: ListedMessage, key: string): boolean {
  return message.metadata?.event_type === EFFECT_EVENT_TYPE && message.metadata.event_payload?.key === key;
}

/**
 * The lookup of an effect Slack gives no way to find again (a stream's start takes no metadata; an
 * upload, an ephemeral note and an edit are not listed with it): when the step that made it may
 * have been cut while Slack answered, its fate cannot be learnt, so it is sent again and the log
 * says in one line that it may be a duplicate.
 */
export function notFindable(what: string): EffectLookup<never> {
  return () => Promise.reject(new Error(`Slack gives no way to find ${what} again`));
}
