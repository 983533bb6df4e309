import twilio from 'twilio';
import { request } from 'undici';
import type RequestClient from 'twilio/lib/base/RequestClient';
import type Response from 'twilio/lib/http/response';

type RequestOptions<TData> = RequestClient.RequestOptions<TData>;

/**
 * The http client behind the `twilio` REST client (its documented `httpClient` seam), for voice
 * and messaging alike:
 * - With an `apiUrl`, a request for a Twilio host goes to that base URL with the same path (an
 *   emulator, a proxy). A request for any other host is refused, so the Account SID and Auth
 *   Token only ever reach Twilio or the configured origin.
 * - It sends through undici instead of twilio's default axios: under a burst of replies, axios
 *   costs about three times the CPU per call (BENCHMARKS.md), on the core that also answers the
 *   webhooks. Redirects are not followed, as with twilio's default.
 */
export class TwilioHttpClient extends twilio.RequestClient {
  constructor(private readonly apiUrl: string, private readonly timeoutMs: number) {
    super({ timeout: timeoutMs });
  }

  override async request<TData>(opts: RequestOptions<TData>): Promise<Response<TData>> {
    const target = new URL(opts.uri);
    if (!isTwilioHost(target.hostname)) {
      throw new Error(`refused to send credentials to ${target.origin}: not a Twilio host`);
    }
    const base = this.apiUrl.replace(/\/+$/, '');
    const url = new URL(base ? `${base}${target.pathname}${target.search}` : opts.uri);
    if (opts.params) for (const [key, value] of formEntries(opts.params as Record<string, unknown>)) url.searchParams.append(key, value);
    const headers: Record<string, string> = { ...(opts.headers as Record<string, string> | undefined) };
    if (opts.username && opts.password) {
      headers.Authorization = `Basic ${Buffer.from(`${opts.username}:${opts.password}`).toString('base64')}`;
    } else if (opts.authStrategy) {
      headers.Authorization = await opts.authStrategy.getAuthString();
    }
    const contentType = headers['Content-Type'] ?? headers['content-type'];
    let body: string | undefined;
    if (opts.data && contentType === 'application/json') body = JSON.stringify(opts.data);
    else if (opts.data) body = new URLSearchParams(formEntries(opts.data as Record<string, unknown>)).toString();
    if (body !== undefined && !contentType) headers['Content-Type'] = 'application/x-www-form-urlencoded';
    const timeout = opts.timeout || this.timeoutMs;
    const res = await request(url, {
      method: opts.method.toUpperCase() as 'GET',
      headers,
      body,
      headersTimeout: timeout,
      bodyTimeout: timeout,
    });
    // twilio parses a string body itself (JSON for the REST API).
    return { statusCode: res.statusCode, body: (await res.body.text()) as TData, headers: res.headers } as unknown as Response<TData>;
  }
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

/** The `twilio` REST client for an Environment's credentials, sending through TwilioHttpClient. */
export function twilioRestClient(accountSid: string, authToken: string, apiUrl: string, timeoutMs = 30000): twilio.Twilio {
  return twilio(accountSid, authToken, { httpClient: new TwilioHttpClient(apiUrl, timeoutMs) });
}
