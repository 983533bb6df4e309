import type twilio from 'twilio';
import { twilioRestClient } from '../telco/twilio-http-client';

/** The provider's REST client for a voice Environment's credentials. */
export function restClient(accountSid: string, authToken: string, apiUrl: string): twilio.Twilio {
  return twilioRestClient(accountSid, authToken, apiUrl, 10000);
}
