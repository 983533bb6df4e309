import { LogLevel, WebClient, type Logger } from '@slack/web-api';
import { TaskError } from '../engine/errors';
import { slackFetch } from './slack-fetch';

/** What the bot token is: its bot user (mentions), bot id (its own messages) and granted scopes. */
export interface AppIdentity {
  botUserId?: string;
  botId?: string;
  team?: string;
  /** From the `x-oauth-scopes` header; undefined when Slack did not say (then nothing is refused up front). */
  scopes?: string[];
}

/**
 * A WebClient for one Environment. `apiUrl` points it at GovSlack, a proxy or an emulator. A few
 * quick retries only: a Task must not hang for the default half hour when Slack is down.
 */
export function createClient(botToken: string, apiUrl: string, logger: Logger): WebClient {
  return new WebClient(botToken, {
    ...(apiUrl ? { slackApiUrl: apiUrl.endsWith('/') ? apiUrl : `${apiUrl}/` } : {}),
    retryConfig: { retries: 2, factor: 2, minTimeout: 200, maxTimeout: 1000 },
    rejectRateLimitedCalls: false,
    fetch: slackFetch,
    // No `timeout` here: slackFetch bounds each call itself, without an AbortSignal timer per call.
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
  if (e?.code === 'slack_webapi_http_error') return new TaskError(4001, `${what}: Slack answered HTTP ${e.statusCode}`);
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
    setLevel: (l: LogLevel) => { level = l; },
    getLevel: () => level,
    setName: () => undefined,
  } as Logger;
}
