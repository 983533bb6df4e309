import type { RED } from '../model/red';

/** The provider gives up on a webhook after 15 s; answer well before that. */
export const DEFAULT_RESPONSE_TIMEOUT = 10;

/** Seconds a webhook waits for the flow before answering with a Redirect (settings.js `channelSessions.voiceResponseTimeout`). */
export function responseTimeoutMs(red: RED): number {
  const configured = Number(red.settings.channelSessions?.voiceResponseTimeout);
  const seconds = configured > 0 ? Math.min(configured, 14) : DEFAULT_RESPONSE_TIMEOUT;
  return seconds * 1000;
}
