import type twilio from 'twilio';
import { TaskError } from '../model/errors';
import { TwilioFault } from '../telco/twilio-faults';
import { twilioRestClient } from '../telco/twilio-http-client';
import { displayName, type MessagingEnvironment } from './environment';

export type ProviderClient = ReturnType<typeof twilio>;

/** Account SID and Auth Token, or 4008 naming what is missing. */
export function accountCredentials(env: MessagingEnvironment): { accountSid: string; authToken: string } {
  const accountSid = env.credentials.accountSid?.trim() ?? '';
  const authToken = env.credentials.authToken?.trim() ?? '';
  const missing = [!accountSid && 'Account SID', !authToken && 'Auth Token'].filter(Boolean);
  if (missing.length) {
    throw new TaskError(4008, `${missing.join(' and ')} not set in the messaging Environment "${displayName(env)}"`);
  }
  if (!accountSid.startsWith('AC')) {
    throw new TaskError(4008, `The Account SID of the messaging Environment "${displayName(env)}" must begin with AC`);
  }
  return { accountSid, authToken };
}

/** One client per deployed Environment (a redeploy makes a new Environment object, so a new client). */
const clients = new WeakMap<MessagingEnvironment, ProviderClient>();

/** The real twilio REST client for an Environment, pointed at `apiUrl` when it is set. */
export function providerClient(env: MessagingEnvironment): ProviderClient {
  const { accountSid, authToken } = accountCredentials(env);
  let client = clients.get(env);
  if (!client) {
    client = twilioRestClient(accountSid, authToken, env.config.apiUrl);
    clients.set(env, client);
  }
  return client;
}

/**
 * A failed call as our 4001, saying what happened: Twilio refused it (its reason and code), did not
 * take it after the retries, could not be reached, or did not answer in time (TwilioFault).
 */
export function providerError(err: unknown, what: string): TaskError {
  if (err instanceof TaskError) return err;
  if (err instanceof TwilioFault) return new TaskError(4001, err.describe(what));
  const e = err as { message?: string; code?: number; status?: number };
  const code = e.code ? ` (Twilio error ${e.code}${e.status ? `, HTTP ${e.status}` : ''})` : '';
  return new TaskError(4001, `Twilio rejected ${what}: ${e.message ?? String(err)}${code}`);
}
