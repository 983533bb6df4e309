/** How the team-chat Environment groups messages into conversations (Session Mode). */
export type SessionMode = 'PerThread' | 'PerChannel' | 'PerUserPerChannel';

/** The `teamchat-environment` properties, with their defaults. */
export interface TeamChatSettings {
  name: string;
  sessionMode: SessionMode;
  useThreads: boolean;
  startFromDirect: boolean;
  startFromMention: boolean;
  startFromChannel: boolean;
  defaultChannel: string;
  publicBaseUrl: string;
  apiUrl: string;
  sessionStore: string;
  maxSessions: number;
  /** Events and clicks over Slack's Socket Mode WebSocket (needs the App-Level Token) instead of HTTP. */
  socketMode: boolean;
}

export const SESSION_MODES: readonly SessionMode[] = ['PerThread', 'PerChannel', 'PerUserPerChannel'];

export function readSettings(config: Record<string, unknown>): TeamChatSettings {
  const text = (v: unknown) => (typeof v === 'string' ? v.trim() : '');
  // Flow JSON written by hand or by older editors may carry booleans as strings.
  const flag = (v: unknown, fallback: boolean) => (v === undefined || v === '' ? fallback : v === true || v === 'true');
  const mode = text(config.sessionMode) as SessionMode;
  return {
    name: text(config.name),
    sessionMode: SESSION_MODES.includes(mode) ? mode : 'PerThread',
    useThreads: flag(config.useThreads, true),
    startFromDirect: flag(config.startFromDirect, true),
    startFromMention: flag(config.startFromMention, true),
    startFromChannel: flag(config.startFromChannel, false),
    defaultChannel: text(config.defaultChannel),
    publicBaseUrl: text(config.publicBaseUrl),
    apiUrl: text(config.apiUrl),
    sessionStore: text(config.sessionStore),
    maxSessions: Math.max(0, Number(config.maxSessions) || 0),
    socketMode: flag(config.socketMode, false),
  };
}
