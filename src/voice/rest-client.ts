import type twilio from 'twilio';
import { twilioRestClient } from '../telco/twilio-http-client';

/** The provider's REST client for a voice Environment's credentials; `token` never shows in its errors. */
export function restClient(accountSid: string, authToken: string, apiUrl: string, token: string): twilio.Twilio {
  return twilioRestClient(accountSid, authToken, apiUrl, 10000, { token });
}
