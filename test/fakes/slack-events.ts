import { createHmac } from 'node:crypto';
import type { HttpResult, NodeRed } from '../harness/node-red';
import { request } from '../harness/node-red';

/** What Slack sends to an event URL, signed the way Slack signs (v0, timestamp, raw body). */
export class SlackEvents {
  private eventCounter = 0;
  private tsCounter = 0;

  constructor(
    private readonly red: NodeRed,
    readonly token: string,
    readonly signingSecret: string,
    readonly team = 'T0TEAM01',
  ) {}

  /** A fresh message ts, as Slack numbers messages. */
  nextTs(): string {
    this.tsCounter += 1;
    return `1710000000.${String(this.tsCounter).padStart(6, '0')}`;
  }

  envelope(event: Record<string, unknown>, eventId?: string): Record<string, unknown> {
    this.eventCounter += 1;
    return {
      token: 'deprecated-verification-token',
      team_id: this.team,
      api_app_id: 'A0APP0001',
      event,
      type: 'event_callback',
      event_id: eventId ?? `Ev${process.pid}${String(this.eventCounter).padStart(6, '0')}`,
      event_time: Math.floor(Date.now() / 1000),
    };
  }

  /** Posts a body signed with the signing secret (or `secret`), at `timestamp` (now by default). */
  post(
    body: unknown,
    options: {
      secret?: string;
      timestamp?: number;
      retryNum?: number;
      token?: string;
      raw?: string;
      signature?: string;
      headers?: Record<string, string>;
    } = {},
  ): Promise<HttpResult> {
    const raw = options.raw ?? JSON.stringify(body);
    const timestamp = String(options.timestamp ?? Math.floor(Date.now() / 1000));
    const signature = options.signature ?? sign(raw, timestamp, options.secret ?? this.signingSecret);
    const headers: Record<string, string> = {
      'Content-Type': 'application/json',
      'X-Slack-Request-Timestamp': timestamp,
      'X-Slack-Signature': signature,
      ...options.headers,
    };
    if (options.retryNum) {
      headers['X-Slack-Retry-Num'] = String(options.retryNum);
      headers['X-Slack-Retry-Reason'] = 'http_timeout';
    }
    return request(this.red.url(`/TeamChat/event/${options.token ?? this.token}`), 'POST', raw, headers);
  }

  /** A direct message (`message.im`). */
  direct(user: string, text: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
    const ts = this.nextTs();
    return { type: 'message', channel: 'D0DIRECT1', channel_type: 'im', user, text, ts, event_ts: ts, team: this.team, client_msg_id: `c-${ts}`, ...extra };
  }

  /** A channel message (`message.channels`). */
  channel(channel: string, user: string, text: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
    const ts = (extra.ts as string | undefined) ?? this.nextTs();
    return {
      type: 'message',
      channel,
      channel_type: channel.startsWith('G') ? 'group' : 'channel',
      user,
      text,
      ts,
      event_ts: ts,
      team: this.team,
      client_msg_id: `c-${ts}`,
      ...extra,
    };
  }

  /** The `app_mention` copy of a channel message that mentions the app. */
  mention(message: Record<string, unknown>): Record<string, unknown> {
    const { channel_type: _omit, ...rest } = message;
    return { ...rest, type: 'app_mention' };
  }
}

export function sign(raw: string, timestamp: string, secret: string): string {
  return `v0=${createHmac('sha256', secret).update(`v0:${timestamp}:${raw}`).digest('hex')}`;
}
