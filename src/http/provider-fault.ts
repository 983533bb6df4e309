import { STATUS_CODES } from 'node:http';

/**
 * Why a provider call (Twilio REST, Slack Web API) failed after its retries (provider-retry.ts),
 * in words a flow author can act on; `describe(what)` names the call for the 4001 a Task takes.
 */
export abstract class ProviderFault extends Error {
  constructor(readonly attempts: number) {
    super();
    this.name = new.target.name;
  }

  abstract describe(what: string): string;
}

/** "1 attempt", "3 attempts". */
export function attemptsText(n: number): string {
  return n === 1 ? '1 attempt' : `${n} attempts`;
}

/** Milliseconds as seconds with one decimal at most: 500 -> "0.5". */
export function secondsText(ms: number): string {
  return String(Math.round(ms / 100) / 10);
}

/** "HTTP 503 Service Unavailable" (the reason phrase when Node knows it). */
export function httpStatusText(status: number): string {
  return `HTTP ${status}${STATUS_CODES[status] ? ` ${STATUS_CODES[status]}` : ''}`;
}
