import twilio from 'twilio';

import type RequestClient from 'twilio/lib/base/RequestClient';
import type Response from 'twilio/lib/http/response';

type RequestOptions<TData> = RequestClient.RequestOptions<TData>;

/**
 * twilio's own HTTP client with one change: with an `apiUrl` set, every request for a Twilio host
 * goes to that base URL with the same path (an emulator, a proxy). Requests for any other host are
 * refused, so the Account SID and Auth Token only ever reach Twilio or the configured origin.
 */
export class ApiUrlRequestClient extends twilio.RequestClient {
  constructor(private readonly apiUrl: string) {
    super({ keepAlive: false, timeout: 10000 });
  }

  override request<TData>(opts: RequestOptions<TData>): Promise<Response<TData>> {
    const target = new URL(opts.uri);
    if (!isTwilioHost(target.hostname)) {
      return Promise.reject(new Error(`refused to send credentials to ${target.origin}: not a Twilio host`));
    }
    if (!this.apiUrl) return super.request<TData>(opts);
    const base = this.apiUrl.replace(/\/+$/, '');
    return super.request<TData>({ ...opts, uri: `${base}${target.pathname}${target.search}` });
  }
}

function isTwilioHost(hostname: string): boolean {
  return hostname === 'twilio.com' || hostname.endsWith('.twilio.com');
}

/** The provider's REST client for an Environment's credentials. */
export function restClient(accountSid: string, authToken: string, apiUrl: string): twilio.Twilio {
  return twilio(accountSid, authToken, { httpClient: new ApiUrlRequestClient(apiUrl) });
}
