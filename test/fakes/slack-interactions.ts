import { randomBytes } from 'node:crypto';
import type { HttpResult, NodeRed } from '../harness/node-red';
import { request } from '../harness/node-red';
import { sign } from './slack-events';

/** Where a click happens: the message the buttons are on. */
export interface ClickTarget {
  user: string;
  channel: string;
  /** The message with the buttons (its ts as the fake API answered it). */
  messageTs: string;
  /** Its thread, when it was posted as a thread reply. */
  threadTs?: string;
  responseUrl?: string;
  triggerId?: string;
}

/**
 * What Slack sends to an Interactivity Request URL: `block_actions` payloads shaped like Slack's
 * published examples, form-encoded in a `payload` field and signed like events (v0, timestamp,
 * the raw form body).
 */
export class SlackClicks {
  /**
   * `responseOrigin` is the fake API's origin: payloads carry a `response_url` there by default,
   * never Slack's real hooks host (tests use no network but loopback).
   */
  constructor(
    private readonly red: NodeRed,
    readonly token: string,
    readonly signingSecret: string,
    readonly responseOrigin: string,
    readonly team = 'T0TEAM01',
  ) {}

  /** A button click (Slack's example: action_id, block_id, text, value, type, action_ts). */
  button(at: ClickTarget, action: { action_id: string; block_id: string; text: string; value?: string }): Record<string, unknown> {
    return this.payload(at, {
      action_id: action.action_id,
      block_id: action.block_id,
      text: { type: 'plain_text', text: action.text, emoji: true },
      ...(action.value !== undefined ? { value: action.value } : {}),
      type: 'button',
      action_ts: actionTs(),
    });
  }

  /** A choice in a static select menu (Slack's example: selected_option with text and value, placeholder). */
  select(at: ClickTarget, action: { action_id: string; block_id: string; text: string; value: string }): Record<string, unknown> {
    return this.payload(at, {
      type: 'static_select',
      action_id: action.action_id,
      block_id: action.block_id,
      selected_option: { text: { type: 'plain_text', text: action.text, emoji: true }, value: action.value },
      placeholder: { type: 'plain_text', text: 'Select an item', emoji: true },
      action_ts: actionTs(),
    });
  }

  /** Posts a payload form-encoded and signed with the signing secret (or `secret`). */
  post(
    payload: Record<string, unknown>,
    options: { secret?: string; timestamp?: number; retryNum?: number; token?: string; raw?: string } = {},
  ): Promise<HttpResult> {
    const raw = options.raw ?? `payload=${encodeURIComponent(JSON.stringify(payload))}`;
    const timestamp = String(options.timestamp ?? Math.floor(Date.now() / 1000));
    const headers: Record<string, string> = {
      'Content-Type': 'application/x-www-form-urlencoded',
      'X-Slack-Request-Timestamp': timestamp,
      'X-Slack-Signature': sign(raw, timestamp, options.secret ?? this.signingSecret),
    };
    if (options.retryNum) {
      headers['X-Slack-Retry-Num'] = String(options.retryNum);
      headers['X-Slack-Retry-Reason'] = 'http_timeout';
    }
    return request(this.red.url(`/TeamChat/interact/${options.token ?? this.token}`), 'POST', raw, headers);
  }

  private payload(at: ClickTarget, action: Record<string, unknown>): Record<string, unknown> {
    return {
      type: 'block_actions',
      user: { id: at.user, username: at.user.toLowerCase(), name: at.user.toLowerCase(), team_id: this.team },
      api_app_id: 'A0APP0001',
      token: 'deprecated-verification-token',
      container: {
        type: 'message',
        message_ts: at.messageTs,
        channel_id: at.channel,
        is_ephemeral: false,
        ...(at.threadTs ? { thread_ts: at.threadTs } : {}),
      },
      trigger_id: at.triggerId ?? `${Date.now()}.${randomBytes(4).readUInt32BE()}.${randomBytes(16).toString('hex')}`,
      team: { id: this.team, domain: 'example' },
      enterprise: null,
      is_enterprise_install: false,
      channel: { id: at.channel, name: at.channel.startsWith('D') ? 'directmessage' : 'help-desk' },
      message: {
        type: 'message',
        subtype: 'bot_message',
        text: 'Approve the request?',
        ts: at.messageTs,
        bot_id: 'BBOT0001',
        user: 'UBOT0001',
        ...(at.threadTs ? { thread_ts: at.threadTs } : {}),
      },
      state: { values: {} },
      response_url: at.responseUrl ?? `${this.responseOrigin}/actions/${this.team}/1232321423432/${randomBytes(12).toString('hex')}`,
      actions: [action],
    };
  }
}

function actionTs(): string {
  return `${Math.floor(Date.now() / 1000)}.${String(Math.floor(Math.random() * 1e6)).padStart(6, '0')}`;
}
