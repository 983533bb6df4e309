import { textOf } from '../model/text';
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
  /** The number calls are placed from (E.164); empty: Call out refuses with 3005. */
  callerId: string;
  /** Calls placed per second at most (Call out), shared by every instance. */
  callsPerSecond: number;
  credentials: VoiceCredentials;
}

export interface VoiceCredentials {
  accountSid: string;
  authToken: string;
  webhookSigningSecret: string;
  token: string;
}

/** Calls per second when the Environment sets none (new accounts are allowed one). */
export const DEFAULT_CALLS_PER_SECOND = 1;
/** Beyond this a pace is surely a typo; the provider's highest account limits are far below it. */
export const MAX_CALLS_PER_SECOND = 1000;

/** The Environment's calls per second, or the default with the field as typed when it is unusable (the deploy warns). */
export function callsPerSecondOf(value: unknown): { value: number; unusable?: string } {
  if (value === undefined || value === null || value === '') return { value: DEFAULT_CALLS_PER_SECOND };
  const n = Number(value);
  if (Number.isFinite(n) && n > 0 && n <= MAX_CALLS_PER_SECOND) return { value: n };
  return { value: DEFAULT_CALLS_PER_SECOND, unusable: textOf(value) };
}

/** The credentials the provider's REST API and signature check need, or the names of those missing. */
export function missingCredentials(env: VoiceEnvironment): string[] {
  const missing: string[] = [];
  if (!env.credentials.accountSid) missing.push('Account SID');
  if (!env.credentials.authToken) missing.push('Auth Token');
  return missing;
}
