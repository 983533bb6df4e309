import type { RedNode } from '../model/red';

/** A deployed `telco-voice-environment`: what the webhooks and Tasks read from it. */
export interface VoiceEnvironment {
  id: string;
  name: string;
  node: RedNode;
  phoneNumberSid: string;
  defaultVoice: string;
  defaultLanguage: string;
  speechModel: string;
  autoDeploy: boolean;
  validateSignatures: boolean;
  publicBaseUrl: string;
  apiUrl: string;
  credentials: VoiceCredentials;
}

export interface VoiceCredentials {
  accountSid: string;
  authToken: string;
  webhookSigningSecret: string;
  token: string;
}

/** The credentials the provider's REST API and signature check need, or the names of those missing. */
export function missingCredentials(env: VoiceEnvironment): string[] {
  const missing: string[] = [];
  if (!env.credentials.accountSid) missing.push('Account SID');
  if (!env.credentials.authToken) missing.push('Auth Token');
  return missing;
}
