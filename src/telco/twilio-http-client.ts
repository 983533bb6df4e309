import { STATUS_CODES } from 'node:http';
import twilio from 'twilio';
import type RequestClient from 'twilio/lib/base/RequestClient';
import type Response from 'twilio/lib/http/response';
import {
  TwilioAnswerCutOff,
  TwilioAnswerTooLarge,
  TwilioConnectionLost,
  TwilioTimeout,
  type TwilioFault,
  TwilioUnavailable,
  TwilioUnreachable,
} from './twilio-faults';
import {
  afterConnectionFault,
  afterRetriedStatus,
  afterUnsentFault,
  connectionFaultReason,
  errorCode,
  isRetriedStatus,
  isTimeout,
  neverSent,
  withRetries,
  type Retry,
} from '../http/provider-retry';
import { ANSWER_TOO_LARGE, bodyText, request, type HttpAnswer } from '../http/http-request';
import { hideToken } from '../http/shown-secrets';

type RequestOptions<TData> = RequestClient.RequestOptions<TData>;

/**
 * The http client behind the `twilio` REST client (its documented `httpClient` seam), for voice
 * and messaging alike:
 * - With an `apiUrl`, a request for a Twilio host goes to that base URL with the same path (an
 *   emulator, a proxy). A request for any other host is refused, so the Account SID and Auth
 *   Token only ever reach Twilio or the configured origin.
 * - It retries what engine/provider-retry.ts says is safe to retry; what still fails is a TwilioFault
 *   (twilio-faults.ts) that says what happened, and a refusal stays twilio's RestException.
 * - An error answer has the Environment's token taken out (TwilioClientOptions.token) before
 *   anything reads it, so neither the RestException nor a TwilioFault carries it.
 * - It sends through Node's own http (http/http-request.ts) instead of twilio's default axios:
 *   under a burst of replies, axios costs about twice the CPU per call (BENCHMARKS.md), on the
 *   core that also answers the webhooks. Redirects are not followed, as with twilio's default.
 */
export class TwilioHttpClient extends twilio.RequestClient {
  constructor(
    private readonly apiUrl: string,
    private readonly timeoutMs: number,
    private readonly options: TwilioClientOptions = {},
  ) {
    super({ timeout: timeoutMs });
  }

  /** Whether an answer with this status is tried again (see TwilioClientOptions). */
  private retried(status: number): boolean {
    return isRetriedStatus(status) && (status === 429 || !this.options.retryUnsentOnly);
  }

  /** A connection fault not tried again: lost once the request may have gone out (see TwilioClientOptions), else Twilio unreachable. */
  private connectionFault(err: unknown, attempt: number): TwilioFault {
    const reason = connectionFaultReason(err, 'Twilio');
    if (this.options.retryUnsentOnly && !neverSent(err)) return new TwilioConnectionLost(reason, errorCode(err), attempt);
    return new TwilioUnreachable(reason, errorCode(err), attempt);
  }

  override async request<TData>(opts: RequestOptions<TData>): Promise<Response<TData>> {
    const target = new URL(opts.uri);
    if (!isTwilioHost(target.hostname)) {
      throw new Error(`refused to send credentials to ${target.origin}: not a Twilio host`);
    }
    const base = this.apiUrl.replace(/\/+$/, '');
    const url = new URL(base ? `${base}${target.pathname}${target.search}` : opts.uri);
    if (opts.params) for (const [key, value] of formEntries(opts.params as Record<string, unknown>)) url.searchParams.append(key, value);
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.username && opts.password) {
      headers.Authorization = `Basic ${Buffer.from(`${opts.username}:${opts.password}`).toString('base64')}`;
    } else if (opts.authStrategy) {
      headers.Authorization = await opts.authStrategy.getAuthString();
    }
    const contentType = headers['Content-Type'] ?? headers['content-type'];
    let body: string | undefined;
    if (opts.data && contentType === 'application/json') body = JSON.stringify(opts.data);
    else if (opts.data) body = new URLSearchParams(formEntries(opts.data)).toString();
    if (body !== undefined && !contentType) headers['Content-Type'] = 'application/x-www-form-urlencoded';
    const timeout = opts.timeout || this.timeoutMs;
    const method = opts.method.toUpperCase();
    const answer = await withRetries((attempt) => this.attempt(url, { method, headers, body }, timeout, attempt), 'twilio');
    return answer as Response<TData>;
  }

  /** One try: the answer, or how long to wait before the next one (see engine/provider-retry.ts). */
  private async attempt(
    url: URL,
    init: { method: string; headers: Record<string, string>; body: string | undefined },
    timeout: number,
    attempt: number,
  ): Promise<{ answer: unknown } | Retry> {
    let res: HttpAnswer;
    try {
      res = await request(url, { ...init, headersTimeout: timeout, bodyTimeout: timeout });
    } catch (err) {
      if (isTimeout(err)) throw new TwilioTimeout(timeout);
      const retry = this.options.retryUnsentOnly ? afterUnsentFault(err, attempt) : afterConnectionFault(err, attempt);
      if (retry) return retry;
      throw this.connectionFault(err, attempt);
    }
    let text: string;
    try {
      text = await bodyText(res.body);
    } catch (err) {
      if (isTimeout(err)) throw new TwilioTimeout(timeout);
      // The answer began: Twilio has the request, and a 2xx means it was carried out. Not retried,
      // whether it broke off or ran past the size an API answer may have (read no further).
      if (!this.retried(res.statusCode)) {
        throw errorCode(err) === ANSWER_TOO_LARGE
          ? new TwilioAnswerTooLarge(res.statusCode, attempt)
          : new TwilioAnswerCutOff(res.statusCode, errorCode(err), attempt);
      }
      text = '';
    }
    // Twilio's error messages may quote a URL we gave it ("Url is not a valid URL: <the Url>"), and
    // they become msg.error, the Session log and log lines: the token in a webhook URL stays out.
    if (res.statusCode < 200 || res.statusCode >= 300) text = hideToken(text, this.options.token);
    if (!this.retried(res.statusCode)) {
      // twilio parses a string body itself (JSON for the REST API) and raises its RestException.
      return { answer: { statusCode: res.statusCode, body: text, headers: res.headers } };
    }
    const next = afterRetriedStatus(res.headers['retry-after'], attempt);
    if ('retryInMs' in next) return next;
    const { code, reason } = twilioReason(res.statusCode, text);
    throw new TwilioUnavailable(res.statusCode, code, reason, attempt, next.waitAsked);
  }
}

/** Twilio's error code and message from an error answer's JSON body, else the HTTP reason phrase. */
function twilioReason(status: number, text: string): { code: number | undefined; reason: string } {
  try {
    const body = JSON.parse(text) as { code?: unknown; message?: unknown };
    if (typeof body.message === 'string' && body.message) {
      return { code: typeof body.code === 'number' ? body.code : undefined, reason: body.message };
    }
  } catch {
    // not JSON (a proxy's page): the status says enough
  }
  return { code: undefined, reason: STATUS_CODES[status] ?? 'error' };
}

/** Form fields the way twilio's own client sends them: an array repeats its key. */
function formEntries(data: Record<string, unknown>): Array<[string, string]> {
  const entries: Array<[string, string]> = [];
  for (const [key, value] of Object.entries(data)) {
    for (const item of Array.isArray(value) ? value : [value]) {
      if (item !== undefined && item !== null) entries.push([key, String(item)]);
    }
  }
  return entries;
}

function isTwilioHost(hostname: string): boolean {
  return hostname === 'twilio.com' || hostname.endsWith('.twilio.com');
}

export interface TwilioClientOptions {
  /**
   * true: a request is tried again only when Twilio certainly did not take it: a 429, or a
   * connection that could not be made (provider-retry.ts neverSent). A 5xx answer is handed back as
   * Twilio's refusal, and a connection lost once the request may have gone out (a reset, "socket
   * hang up") is a TwilioConnectionLost. For creates that reach a person (a call): Twilio takes no
   * idempotency key, so a second try after it may have taken the first could ring the person twice.
   * Messages keep the default (false): a reply lost is worse than the rare second copy.
   */
  retryUnsentOnly?: boolean;
  /** The Environment's token: the webhook URLs given to Twilio carry it, and its error answers may quote them. */
  token?: string;
}

/** The `twilio` REST client for an Environment's credentials, sending through TwilioHttpClient. */
export function twilioRestClient(accountSid: string, authToken: string, apiUrl: string, timeoutMs = 30000, options: TwilioClientOptions = {}): twilio.Twilio {
  return twilio(accountSid, authToken, { httpClient: new TwilioHttpClient(apiUrl, timeoutMs, options) });
}
