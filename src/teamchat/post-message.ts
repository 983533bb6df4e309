import { WebAPIHTTPError, WebAPIPlatformError, WebAPIRequestError, type FetchFunction, type WebAPICallResult } from '@slack/web-api';
import { CALL_TIMEOUT_MS, SLACK_API, slackWebApiFetch } from './slack-fetch';

/** What `chat.postMessage` is given: the WebClient's arguments, as it would send them. */
export type PostMessageArguments = Record<string, unknown> & { channel: string; text: string };

/**
 * `chat.postMessage`, sent straight through the bot token's fetch (slack-fetch.ts) rather than
 * through the WebClient. Every reply of a busy bot takes this path, and the WebClient's own work
 * per call (its request queue, the redacted debug texts it builds at any log level, its result
 * object) costs about as much CPU again as the request itself (BENCHMARKS.md). Everything else
 * still goes through the WebClient.
 *
 * It is sent as the WebClient sends it (a form, objects as JSON, the token as a bearer header)
 * and it fails as the WebClient fails, with the same error classes: Slack's refusal (`ok: false`)
 * is a WebAPIPlatformError, another status a WebAPIHTTPError, a request that got no usable answer
 * a WebAPIRequestError around the fetch's SlackFault. So `slackFailure` reads both alike. A
 * request that failed is also handed to `requestFailed` (the Environment says it in Node-RED's
 * log at warn, as the WebClient says a failed request).
 */
export function postMessageCaller(
  botToken: string,
  apiUrl: string,
  requestFailed: (err: Error) => void,
  timeoutMs = CALL_TIMEOUT_MS,
): (args: PostMessageArguments) => Promise<{ ts?: string }> {
  const fetch: FetchFunction = slackWebApiFetch(apiUrl, timeoutMs);
  const url = `${apiUrl ? (apiUrl.endsWith('/') ? apiUrl : `${apiUrl}/`) : SLACK_API}chat.postMessage`;
  const headers = { Authorization: `Bearer ${botToken}`, 'Content-Type': 'application/x-www-form-urlencoded' };
  return async (args) => {
    let res: Awaited<ReturnType<FetchFunction>>;
    let text: string;
    try {
      res = await fetch(url, { method: 'POST', headers, body: formOf(args) });
      text = await res.text();
    } catch (err) {
      requestFailed(err as Error);
      throw new WebAPIRequestError(err as Error);
    }
    if (res.status !== 200) throw new WebAPIHTTPError(res.status, res.statusText, Object.fromEntries(res.headers.entries()), text);
    let result: WebAPICallResult & { ts?: string; error?: string };
    try {
      result = JSON.parse(text) as typeof result;
    } catch {
      throw new WebAPIRequestError(new Error('Slack answered with something that is not JSON'));
    }
    if (!result?.ok) throw new WebAPIPlatformError({ ...result, error: result?.error ?? 'unknown_error' });
    return result;
  };
}

/** The body as the WebClient serialises it: strings, numbers and booleans as they are, anything else as JSON; no empty fields. */
function formOf(args: Record<string, unknown>): string {
  const form = new URLSearchParams();
  for (const [key, value] of Object.entries(args)) {
    if (value === undefined || value === null) continue;
    form.append(key, typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' ? String(value) : JSON.stringify(value));
  }
  return form.toString();
}
