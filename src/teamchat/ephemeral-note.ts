import { discardBody, request } from '../http/http-request';
import type { TeamChatEnvironment } from './environment';
import type { Click } from './click';

/** Slack's hosts for `response_url` (commercial and GovSlack). */
const RESPONSE_HOSTS: ReadonlySet<string> = new Set(['hooks.slack.com', 'hooks.slack-gov.com']);
const RESPONSE_TIMEOUT_MS = 10000;

/**
 * Tells only the person who clicked why nothing happened. Slack's `response_url` needs no scope and
 * works in any conversation; it is only ever called on Slack's own hosts (or the Environment's
 * `apiUrl` origin, for an emulator), since the URL comes from the payload. Otherwise, or when it
 * fails, `chat.postEphemeral`. A note that cannot be sent is only logged at debug level: the
 * click was acknowledged and nothing ran either way.
 */
export async function sendEphemeralNote(env: TeamChatEnvironment, click: Click, text: string): Promise<void> {
  if (click.responseUrl && mayCall(env, click.responseUrl)) {
    try {
      const res = await request(click.responseUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json; charset=utf-8' },
        body: JSON.stringify({ response_type: 'ephemeral', replace_original: false, text }),
        headersTimeout: RESPONSE_TIMEOUT_MS,
        bodyTimeout: RESPONSE_TIMEOUT_MS,
      });
      await discardBody(res.body);
      if (res.statusCode >= 200 && res.statusCode < 300) return;
      env.node.debug(`response_url answered HTTP ${res.statusCode}; trying chat.postEphemeral`);
    } catch (err) {
      env.node.debug(`response_url failed (${(err as Error).message}); trying chat.postEphemeral`);
    }
  }
  try {
    await env.client().chat.postEphemeral({
      channel: click.channel,
      user: click.user,
      text,
      ...(click.threadTs ? { thread_ts: click.threadTs } : {}),
    });
  } catch (err) {
    env.node.debug(`chat.postEphemeral failed: ${(err as Error).message}`);
  }
}

/** https on Slack's hooks host, or the configured `apiUrl`'s own origin. */
export function mayCall(env: TeamChatEnvironment, url: string): boolean {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return false;
  }
  if (target.protocol === 'https:' && RESPONSE_HOSTS.has(target.hostname) && !target.port) return true;
  if (!env.settings.apiUrl) return false;
  try {
    return new URL(env.settings.apiUrl).origin === target.origin;
  } catch {
    return false;
  }
}
