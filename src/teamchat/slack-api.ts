import { LogLevel, WebClient, type Logger } from '@slack/web-api';
import { TaskError } from '../model/errors';
import { SlackFault } from './slack-faults';
import { CALL_TIMEOUT_MS, slackWebApiFetch } from './slack-fetch';

/** What the bot token is: its bot user (mentions), bot id (its own messages) and granted scopes. */
export interface AppIdentity {
  botUserId?: string;
  botId?: string;
  team?: string;
  /** From the `x-oauth-scopes` header; undefined when Slack did not say (then nothing is refused up front). */
  scopes?: string[];
}

/**
 * A WebClient for one Environment. `apiUrl` points it at GovSlack, a proxy or an emulator.
 * Retries are its fetch's (slack-fetch.ts), never the client's own: those retry any request
 * error, so a chat.postMessage that reached Slack but answered slowly would be posted twice, and
 * a 429 would hold the Task (and pause every call of the client) for as long as Slack asks.
 * `timeoutMs` bounds each attempt (tests shorten it).
 */
export function createClient(botToken: string, apiUrl: string, logger: Logger, timeoutMs = CALL_TIMEOUT_MS): WebClient {
  return new WebClient(botToken, {
    ...(apiUrl ? { slackApiUrl: apiUrl.endsWith('/') ? apiUrl : `${apiUrl}/` } : {}),
    retryConfig: { retries: 0 },
    rejectRateLimitedCalls: true,
    fetch: slackWebApiFetch(apiUrl, timeoutMs),
    // No `timeout` here: the fetch bounds each attempt itself, without an AbortSignal timer per call.
    logger,
    logLevel: LogLevel.WARN,
  });
}

/** Asks Slack who the token is; the response headers carry the scopes. */
export async function learnIdentity(client: WebClient): Promise<AppIdentity> {
  const res = await client.auth.test();
  return {
    botUserId: res.user_id || undefined,
    botId: res.bot_id || undefined,
    team: res.team_id || undefined,
    scopes: res.response_metadata?.scopes,
  };
}

/** Slack's error code in a WebClient failure (its `ok: false` answer), else ''. */
export function slackErrorCode(err: unknown): string {
  const e = err as { code?: string; data?: { error?: string } };
  return e?.code === 'slack_webapi_platform_error' ? (e.data?.error ?? 'unknown_error') : '';
}

/** Slack's failure as the engine error the Task takes: a missing scope is configuration (4008), the rest 4001. */
export function slackFailure(err: unknown, what: string): TaskError {
  if (err instanceof TaskError) return err;
  const e = err as { code?: string; data?: { error?: string; needed?: string }; statusCode?: number; message?: string };
  if (e?.code === 'slack_webapi_platform_error') {
    const reason = e.data?.error ?? 'unknown_error';
    if (reason === 'missing_scope') {
      return new TaskError(4008, `${what}: the bot token lacks the ${e.data?.needed ?? 'needed'} scope; add it and reinstall the app`);
    }
    if (reason === 'invalid_auth' || reason === 'not_authed' || reason === 'token_revoked' || reason === 'account_inactive') {
      return new TaskError(4008, `${what}: the bot token was refused (${reason})`);
    }
    return new TaskError(4001, `${what}: Slack answered ${reason}`);
  }
  if (e?.code === 'slack_webapi_request_error') {
    // The fetch's SlackFault says what happened; any other request error, that Slack was not reached.
    const original = (err as { original?: unknown }).original;
    if (original instanceof SlackFault) return new TaskError(4001, original.describe(what));
    return new TaskError(4001, `${what}: Slack could not be reached: ${(original as Error | undefined)?.message ?? e.message}`);
  }
  if (e?.code === 'slack_webapi_rate_limited_error') {
    // Only if a 429 ever reaches the WebClient (the fetch turns one into a SlackFault).
    return new TaskError(4001, `${what}: Slack answered HTTP 429 and asked to wait ${(err as { retryAfter?: number }).retryAfter} s; not tried again`);
  }
  if (e?.code === 'slack_webapi_http_error') {
    // A status our fetch does not retry (a redirect, a 4xx, 501): one attempt.
    const phrase = (err as { statusMessage?: string }).statusMessage;
    return new TaskError(4001, `${what}: Slack answered HTTP ${e.statusCode}${phrase ? ` ${phrase}` : ''}`);
  }
  if (err instanceof SlackFault) return new TaskError(4001, err.describe(what));
  return new TaskError(4001, `${what}: ${e?.message ?? String(err)}`);
}

/** The WebClient logs through Node-RED's log, tagged, never with the token (it redacts it). */
export function redLogger(log: { warn(m: string): void; error(m: string): void; info(m: string): void; debug(m: string): void }): Logger {
  let level = LogLevel.WARN;
  const order = [LogLevel.DEBUG, LogLevel.INFO, LogLevel.WARN, LogLevel.ERROR];
  const on = (l: LogLevel) => order.indexOf(l) >= order.indexOf(level);
  const text = (args: unknown[]) => `[channel-sessions teamchat] ${args.map(String).join(' ')}`;
  return {
    debug: (...a: unknown[]) => on(LogLevel.DEBUG) && log.debug(text(a)),
    info: (...a: unknown[]) => on(LogLevel.INFO) && log.info(text(a)),
    warn: (...a: unknown[]) => on(LogLevel.WARN) && log.warn(text(a)),
    error: (...a: unknown[]) => on(LogLevel.ERROR) && log.error(text(a)),
    setLevel: (l: LogLevel) => {
      level = l;
    },
    getLevel: () => level,
    setName: () => undefined,
  };
}
