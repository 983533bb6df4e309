import twilio from 'twilio';
import { convert } from 'xmlbuilder2';
import should from 'should';
import { chain, type FlowNode } from '../harness/flows';
import { eventually, type HttpResult, type NodeRed } from '../harness/node-red';
import type { FakeTwilioMessagingApi } from './twilio-messaging-api';

export const ACCOUNT_SID = 'AC' + '0'.repeat(31) + '2';
export const AUTH_TOKEN = 'auth-token-for-tests-0123456789';
export const SIGNING_SECRET = 'webhook-signing-secret-for-tests';
export const INBOUND = '/api/TelcoModule/Messaging/inbound/';

let sidCounter = 0;
/** A fresh provider MessageSid (`SM` + 32 hex). */
export function messageSid(prefix = 'SM'): string {
  sidCounter += 1;
  return prefix + (Date.now().toString(16) + sidCounter.toString(16).padStart(8, '0')).padStart(32, '0').slice(-32);
}

/** A `telco-messaging-environment` node pointed at the fake, credentials inline as the editor deploys them. */
export function messagingEnvironment(
  id: string,
  token: string,
  fake: FakeTwilioMessagingApi,
  red: NodeRed,
  props: Record<string, unknown> = {},
  credentials: Record<string, string> = {},
): FlowNode {
  return {
    id,
    type: 'telco-messaging-environment',
    name: `env ${id}`,
    messagingServiceSid: '',
    autoDeploy: false,
    validateSignatures: true,
    publicBaseUrl: red.url('').replace(/\/$/, ''),
    apiUrl: fake.url,
    sessionStore: '',
    maxSessions: 0,
    ...props,
    credentials: { accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN, token, ...credentials },
  };
}

/** The form Twilio posts for an inbound message. */
export function inboundForm(from: string, to: string, body: string, extra: Record<string, string> = {}): Record<string, string> {
  const sid = extra.MessageSid ?? messageSid(extra.NumMedia && extra.NumMedia !== '0' ? 'MM' : 'SM');
  return {
    ToCountry: 'US',
    SmsMessageSid: sid,
    NumMedia: '0',
    SmsSid: sid,
    SmsStatus: 'received',
    Body: body,
    To: to,
    NumSegments: '1',
    MessageSid: sid,
    AccountSid: ACCOUNT_SID,
    From: from,
    ApiVersion: '2010-04-01',
    ...extra,
  };
}

/** Posts a webhook signed the way Twilio signs it (HMAC-SHA1 over the URL and the sorted params). */
export async function postInbound(red: NodeRed, token: string, params: Record<string, string>, key = AUTH_TOKEN): Promise<HttpResult> {
  const path = INBOUND + token;
  const signature = twilio.getExpectedTwilioSignature(key, red.url(path), params);
  return red.request('POST', path, new URLSearchParams(params).toString(), {
    'Content-Type': 'application/x-www-form-urlencoded',
    'X-Twilio-Signature': signature,
  });
}

/** The answer must be the empty TwiML document, as text/xml. */
export function assertEmptyTwiml(res: HttpResult): void {
  should(res.headers.get('content-type') ?? '').match(/^text\/xml/);
  should(convert(res.text, { format: 'object' })).eql({ Response: {} });
}

/** Sessions of an Environment (live and ended) for a conversation key `<user>><ours>`. */
export async function sessionsOf(red: NodeRed, environment: string, user: string, ours: string): Promise<any[]> {
  const res = await red.admin('GET', `/channel-sessions/sessions?environment=${environment}&ended=true`);
  const key = `${user}>${ours}`;
  const summaries = (res.body as any[]).filter((s) => s.conversation === key);
  return Promise.all(summaries.map(async (s) => (await red.admin('GET', `/channel-sessions/sessions/${s.id}`)).body));
}

/** Waits for the one Session of a pair to satisfy `check`. */
export function sessionWhen(red: NodeRed, environment: string, user: string, ours: string, check: (s: any) => boolean, what: string): Promise<any> {
  return eventually(
    async () => {
      const found = await sessionsOf(red, environment, user, ours);
      return found.find(check);
    },
    8000,
    what,
  );
}

/** An SMS survey of two questions on tab `z` (`<p>Start`, `<p>Q1`, `<p>Q2`, `<p>Thanks`, `<p>End`): Q1?, Q2?, then "Thanks {a1},{a2}". */
export function twoQuestionSurvey(z: string, environment: string, p: string): FlowNode[] {
  return chain(z, [
    ['telco-sms-start', `${p}Start`, { environment }],
    ['input-task', `${p}Q1`, { prompt: 'Q1?', resultVariable: 'a1' }],
    ['input-task', `${p}Q2`, { prompt: 'Q2?', resultVariable: 'a2' }],
    ['output-task', `${p}Thanks`, { text: 'Thanks {a1},{a2}' }],
    ['end-task', `${p}End`],
  ]);
}
