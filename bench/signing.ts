import { createHmac } from 'node:crypto';
import twilio from 'twilio';

/** Slack's v0 request signature over `v0:<timestamp>:<raw body>`. */
export function slackHeaders(signingSecret: string, body: string): Record<string, string> {
  const ts = Math.floor(Date.now() / 1000).toString();
  const sig = 'v0=' + createHmac('sha256', signingSecret).update(`v0:${ts}:${body}`).digest('hex');
  return { 'Content-Type': 'application/json', 'X-Slack-Request-Timestamp': ts, 'X-Slack-Signature': sig };
}

/** Twilio's X-Twilio-Signature for a form POST to `url`, computed with its own library. */
export function twilioForm(authToken: string, url: string, params: Record<string, string>): { body: string; headers: Record<string, string> } {
  const signature = twilio.getExpectedTwilioSignature(authToken, url, params);
  return {
    body: new URLSearchParams(params).toString(),
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'X-Twilio-Signature': signature },
  };
}

let sids = 0;

/** A MessageSid never used before in this run (the store dedupes inbound messages by it). */
export function newMessageSid(): string {
  return `SM${(sids++).toString(16).padStart(32, '0')}`;
}
