import twilio from 'twilio';
import { TaskError } from '../model/errors';
import { TwilioFault } from '../telco/twilio-faults';
import { restSettingsError } from '../telco/twilio-account';
import { twilioRestClient } from '../telco/twilio-http-client';
import { displayName, type MessagingEnvironment } from './environment';

export type ProviderClient = ReturnType<typeof twilio>;

/**
 * Account SID and Auth Token, or 4008 naming what is missing or unusable. An unusable `apiUrl`
 * stops here too (sends, Text out and media downloads alike), so the Environment's fault is said
 * before anything is tried.
 */
export function accountCredentials(env: MessagingEnvironment): { accountSid: string; authToken: string } {
  const accountSid = env.credentials.accountSid?.trim() ?? '';
  const authToken = env.credentials.authToken?.trim() ?? '';
  const missing = [!accountSid && 'Account SID', !authToken && 'Auth Token'].filter(Boolean);
  if (missing.length) {
    throw new TaskError(4008, `${missing.join(' and ')} not set in the messaging Environment "${displayName(env)}"`);
  }
  const unusable = restSettingsError(accountSid, env.config.apiUrl, `messaging Environment "${displayName(env)}"`);
  if (unusable) throw unusable;
  return { accountSid, authToken };
}

/** One client per deployed Environment (a redeploy makes a new Environment object, so a new client). */
const clients = new WeakMap<MessagingEnvironment, ProviderClient>();

/** The real twilio REST client for an Environment, pointed at `apiUrl` when it is set. */
export function providerClient(env: MessagingEnvironment): ProviderClient {
  let client = clients.get(env);
  if (!client) {
    // Checked once per deployed Environment: its credentials and settings do not change until a redeploy.
    const { accountSid, authToken } = accountCredentials(env);
    client = twilioRestClient(accountSid, authToken, env.config.apiUrl, undefined, { token: env.credentials.token });
    clients.set(env, client);
  }
  return client;
}

/** One message as Messages.json takes it (what the SDK's `messages.create` is given). */
export interface MessageToCreate {
  from: string;
  to: string;
  body?: string;
  mediaUrl?: string[];
  contentSid?: string;
  contentVariables?: string;
  statusCallback?: string;
}

/**
 * Creates one message: the Messages.json POST through the Environment's client (its credentials,
 * its transport with the host check and the retries, twilio-http-client.ts), without the SDK's
 * Messages resource. Every reply of a busy number takes this path, and the resource's own work
 * per call (checking and mapping every field it knows, then a MessageInstance with each of its
 * dates parsed) costs about as much CPU again as the request itself (BENCHMARKS.md). A refusal is
 * the SDK's own RestException, so `providerError` reads it as before. Resolves to the message's SID.
 */
export async function createMessage(env: MessagingEnvironment, message: MessageToCreate): Promise<string | undefined> {
  const client = providerClient(env);
  const data: Record<string, string | string[]> = { To: message.to, From: message.from };
  if (message.statusCallback) data.StatusCallback = message.statusCallback;
  if (message.body !== undefined) data.Body = message.body;
  if (message.mediaUrl?.length) data.MediaUrl = message.mediaUrl;
  if (message.contentSid) data.ContentSid = message.contentSid;
  if (message.contentVariables) data.ContentVariables = message.contentVariables;
  const response = (await client.request({
    method: 'post',
    uri: `https://api.twilio.com/2010-04-01/Accounts/${client.accountSid}/Messages.json`,
    data,
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
  })) as { statusCode: number; body: unknown };
  if (response.statusCode < 200 || response.statusCode >= 300) throw new twilio.RestException(response);
  const created = (typeof response.body === 'string' ? safeJson(response.body) : response.body) as { sid?: unknown } | undefined;
  return typeof created?.sid === 'string' ? created.sid : undefined;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
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
