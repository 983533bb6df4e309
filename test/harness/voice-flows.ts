import { randomBytes } from 'node:crypto';
import type { FlowNode } from './flows';
import type { NodeRed } from './node-red';
import { ACCOUNT_SID, AUTH_TOKEN } from '../fakes/twilio-voice-caller';

/** A `telco-voice-environment` as the editor deploys it, credentials inline. */
export function voiceEnvironment(id: string, props: Record<string, unknown> = {}, credentials: Record<string, string> = {}): FlowNode & { token: string } {
  const token = randomBytes(18).toString('base64url');
  return {
    id,
    type: 'telco-voice-environment',
    name: `Voice ${id}`,
    phoneNumberSid: '',
    defaultVoice: '',
    defaultLanguage: '',
    speechModel: '',
    autoDeploy: false,
    validateSignatures: true,
    publicBaseUrl: '',
    apiUrl: '',
    sessionStore: '',
    maxSessions: 0,
    ...props,
    credentials: { accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN, webhookSigningSecret: '', token, ...credentials },
    token: credentials.token ?? token,
  };
}

/** The Session a call's CallSid keys (live or ended), with vars, history and log. */
export async function sessionOfCall(red: NodeRed, callSid: string): Promise<any> {
  const list = await red.admin('GET', '/channel-sessions/sessions?ended=true');
  const summary = (list.body as any[]).find((s) => s.conversation === callSid);
  if (!summary) return undefined;
  return (await red.admin('GET', `/channel-sessions/sessions/${summary.id}`)).body;
}

/** Lines Node-RED logged after a mark, so one test's log lines are told from another's. */
export function logsSince(red: NodeRed, mark: number): string[] {
  return red.logs.slice(mark);
}
