import { attemptsText, httpStatusText, secondsText } from '../http/provider-fault';
import { ANSWER_TOO_LARGE, bodyBytes, discardBody, megabytesText, request, type HttpAnswer } from '../http/http-request';
import {
  afterLostDownload,
  afterRetriedStatus,
  connectionFaultReason,
  errorCode,
  isConnectionFault,
  isRetriedStatus,
  isTimeout,
  withRetries,
  type Retry,
} from '../http/provider-retry';

/**
 * How long one attempt (all its redirects, the whole body included) may take. A download makes at
 * most 3 attempts (provider-retry.ts: RETRIES) with at most 2 waits between them, each at most
 * MAX_RETRY_AFTER_MS (10 s), so it ends within 3 x 20 + 2 x 10 = 80 s whatever the host does (a
 * hang, a body trickling in). The step that downloads holds its conversation meanwhile (a message's
 * up to 5 files come one after another), so the bound stays short; 20 s still fetches the largest
 * file kept (10 MB) at 4 Mbit/s, far less than Twilio's and Slack's file hosts serve a server. No
 * one waits on the other side: the provider's webhook was answered before the step ran.
 */
export const ATTEMPT_TIMEOUT_MS = 20_000;

/** What a provider module says about each address a download reaches (the first, then each redirect's). */
export interface DownloadHop {
  /** Headers for this address (credentials only where the provider's rules allow them). */
  headers: Record<string, string>;
  /** Who answers there, in a flow author's words: "Twilio's media host". */
  host: string;
}

export interface DownloadRules {
  /**
   * The headers and words for the `index`th address of an attempt (0: the file's own URL). Throws
   * (a DownloadFailed, never tried again) when the address may not be reached with them.
   */
  hop(url: URL, index: number): DownloadHop;
  maxRedirects: number;
  /** Largest body kept; a larger one fails at once (a declared length) or as soon as it is passed. */
  maxBytes: number;
  /** Why a 2xx answer is not the file (read before its body), or undefined when it is. */
  notTheFile?(headers: HttpAnswer['headers']): string | undefined;
  /** Tests shorten it. */
  attemptTimeoutMs?: number;
}

/** A download that failed for good; its message says what happened, for the 4022 in the Session log. */
export class DownloadFailed extends Error {
  override name = 'DownloadFailed';
}

/**
 * GETs a file a person sent, following redirects by hand (each address gets only the headers its
 * rules allow) and retrying as engine/provider-retry.ts says a download may be: the whole chain
 * again from the file's own URL, as a redirect's address may be short-lived.
 */
export function download(url: string, rules: DownloadRules): Promise<Buffer> {
  const timeoutMs = rules.attemptTimeoutMs ?? ATTEMPT_TIMEOUT_MS;
  return withRetries((attempt) => tryOnce(new URL(url), rules, timeoutMs, attempt), 'download');
}

async function tryOnce(url: URL, rules: DownloadRules, timeoutMs: number, attempt: number): Promise<{ answer: Buffer } | Retry> {
  const signal = AbortSignal.timeout(timeoutMs);
  let current = url;
  for (let index = 0; index <= rules.maxRedirects; index++) {
    const { headers, host } = rules.hop(current, index);
    let res: HttpAnswer;
    try {
      res = await request(current, { method: 'GET', headers, signal, headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
    } catch (err) {
      if (signal.aborted || isTimeout(err)) return lost(attempt, `no answer from ${host} within ${secondsText(timeoutMs)} s`);
      if (isConnectionFault(err)) {
        return lost(attempt, `${host} could not be reached: ${connectionFaultReason(err, 'it')}${codeOf(err)}`);
      }
      throw new DownloadFailed(`${host} could not be reached: ${(err as Error).message || String(err)}`);
    }
    const status = res.statusCode;
    if (status >= 300 && status < 400) {
      await discard(res);
      const location = header(res.headers, 'location');
      if (!location) throw new DownloadFailed(`${host} answered ${httpStatusText(status)} without a Location`);
      current = new URL(location, current);
      continue;
    }
    if (status < 200 || status >= 300) {
      await discard(res);
      if (!isRetriedStatus(status)) throw new DownloadFailed(`${host} answered ${httpStatusText(status)}`);
      const next = afterRetriedStatus(res.headers['retry-after'], attempt);
      if ('retryInMs' in next) return next;
      if (next.waitAsked) {
        const { seconds: asked, capSeconds } = next.waitAsked;
        throw new DownloadFailed(
          `${host} answered ${httpStatusText(status)} and asked to wait ${asked} s, longer than the ${capSeconds} s a download may wait; not tried again (${attemptsText(attempt)})`,
        );
      }
      throw new DownloadFailed(`${host} answered ${httpStatusText(status)} after ${attemptsText(attempt)}`);
    }
    const refusal = rules.notTheFile?.(res.headers);
    if (refusal) {
      await discard(res);
      throw new DownloadFailed(refusal);
    }
    try {
      return { answer: await readCapped(res, rules.maxBytes) };
    } catch (err) {
      if (err instanceof DownloadFailed) throw err;
      if (signal.aborted || isTimeout(err)) return lost(attempt, `${host} did not send the whole file within ${secondsText(timeoutMs)} s`);
      return lost(attempt, `the file from ${host} was cut off mid-way${codeOf(err)}`);
    }
  }
  throw new DownloadFailed(`more than ${rules.maxRedirects} redirects`);
}

/** Another attempt after a lost answer, or the failure for good, with how many attempts were made. */
function lost(attempt: number, what: string): Retry {
  const retry = afterLostDownload(attempt);
  if (retry) return retry;
  throw new DownloadFailed(`${what}; ${attemptsText(attempt)}`);
}

/** Reads a body but stops past the limit (bodyBytes), so a huge file never fills memory. */
async function readCapped(res: HttpAnswer, limit: number): Promise<Buffer> {
  try {
    return await bodyBytes(res.body, limit);
  } catch (err) {
    if (errorCode(err) !== ANSWER_TOO_LARGE) throw err;
    const over = `over the ${megabytesText(limit)} limit per message`;
    const declared = (err as { declared?: number }).declared;
    throw new DownloadFailed(declared === undefined ? over : `${declared} bytes, ${over}`);
  }
}

/** An answer whose body is not wanted: dropped (a small one is read off, so the connection is kept). */
async function discard(res: HttpAnswer): Promise<void> {
  await discardBody(res.body);
}

function header(headers: HttpAnswer['headers'], name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function codeOf(err: unknown): string {
  const code = errorCode(err);
  return code ? ` (${code})` : '';
}
