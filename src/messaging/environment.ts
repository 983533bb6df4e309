import type { EnvironmentDirectory } from '../kit/environment-directory';
import { publicRouteUrl } from '../http/public-url';
import type { RedNode } from '../model/red';

/** `telco-messaging-environment` properties. */
export interface MessagingConfig {
  name: string;
  messagingServiceSid: string;
  autoDeploy: boolean;
  validateSignatures: boolean;
  publicBaseUrl: string;
  apiUrl: string;
  sessionStore: string;
  maxSessions: number;
}

export interface MessagingCredentials {
  accountSid?: string;
  authToken?: string;
  webhookSigningSecret?: string;
  token?: string;
}

/** A deployed messaging Environment, as the routes and Channel behaviours find it. */
export interface MessagingEnvironment {
  id: string;
  node: RedNode;
  config: MessagingConfig;
  credentials: MessagingCredentials;
}

export const MODULE_KEY = 'messaging';
export const INBOUND_PATH = '/api/TelcoModule/Messaging/inbound/';
export const MEDIA_PATH = '/api/TelcoModule/Messaging/media/';
export const START_PATH = '/api/TelcoModule/Messaging/start/';
export const STATUS_PATH = '/api/TelcoModule/Messaging/status/';

/** Deployed messaging Environments of a runtime, by id and by token. */
export type MessagingEnvironments = EnvironmentDirectory<MessagingEnvironment>;

export function readConfig(raw: Record<string, unknown>): MessagingConfig {
  const text = (v: unknown) => (typeof v === 'string' ? v.trim() : '');
  return {
    name: text(raw.name),
    messagingServiceSid: text(raw.messagingServiceSid),
    autoDeploy: raw.autoDeploy === true || raw.autoDeploy === 'true',
    // On unless explicitly turned off: an Environment saved without the field stays protected.
    validateSignatures: !(raw.validateSignatures === false || raw.validateSignatures === 'false'),
    publicBaseUrl: text(raw.publicBaseUrl),
    apiUrl: text(raw.apiUrl),
    sessionStore: text(raw.sessionStore),
    maxSessions: Math.max(0, Number(raw.maxSessions) || 0),
  };
}

export function displayName(env: MessagingEnvironment): string {
  return env.config.name || env.id;
}

/** The inbound URL to register with the provider; undefined without a public base URL. */
export function inboundUrl(env: MessagingEnvironment, httpNodeRoot: string | undefined): string | undefined {
  const token = env.credentials.token;
  return token ? publicRouteUrl(env.config.publicBaseUrl, httpNodeRoot, INBOUND_PATH + token) : undefined;
}
