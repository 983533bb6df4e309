import type { ChannelName } from '../model/channels';
import { channelOf } from './addresses';
import { locationText, readLocation, type SharedLocation } from './location';

/** One inbound SMS or messenger message, read from the provider's webhook form. */
export interface InboundSms {
  channel: ChannelName;
  from: string;
  to: string;
  text: string;
  messageSid: string;
  profileName: string;
  media: Array<{ url: string; type: string }>;
  /** A tapped quick-reply button (messenger), else undefined. */
  button?: { payload: string; text: string };
  /** A shared location (messenger); `text` is then its label, address or coordinates. */
  location?: SharedLocation;
  /** The provider's `MessageType` (messenger: text, image, location, sticker …), for log lines. */
  type?: string;
}

export type ReadResult = { ok: true; message: InboundSms } | { ok: false; reason: string };

/** The provider sends at most 10 media per message; more indices are not read. */
const MAX_MEDIA_FIELDS = 10;

export function readInbound(params: Record<string, string>): ReadResult {
  const from = (params.From ?? '').trim();
  const to = (params.To ?? '').trim();
  const missing = [!from && 'From', !to && 'To'].filter(Boolean);
  if (missing.length) return { ok: false, reason: `the message has no ${missing.join(' and no ')}` };
  const channel = channelOf(from);
  const declared = Number.parseInt(params.NumMedia ?? '', 10);
  const count = Math.min(Number.isFinite(declared) && declared > 0 ? declared : 0, MAX_MEDIA_FIELDS);
  const media: InboundSms['media'] = [];
  for (let i = 0; i < count; i++) {
    const url = params[`MediaUrl${i}`];
    if (url) media.push({ url, type: params[`MediaContentType${i}`] || 'application/octet-stream' });
  }
  const payload = params.ButtonPayload;
  const location = readLocation(params);
  const body = params.Body ?? '';
  return {
    ok: true,
    message: {
      channel,
      from,
      to,
      // A location pin comes with no Body: its label, address or coordinates are the answer.
      text: location && !body.trim() ? locationText(location) : body,
      messageSid: params.MessageSid ?? params.SmsMessageSid ?? params.SmsSid ?? '',
      // The SMS Channel has no profile name.
      profileName: channel === 'TelcoMessagingMessenger' ? (params.ProfileName ?? '') : '',
      media,
      ...(payload !== undefined && payload !== '' ? { button: { payload, text: params.ButtonText ?? params.Body ?? '' } } : {}),
      ...(location ? { location } : {}),
      ...(params.MessageType ? { type: params.MessageType } : {}),
    },
  };
}

/** Status callbacks (a delivery report pointed at the inbound URL) are not messages from a user. */
export function isStatusCallback(params: Record<string, string>): boolean {
  return params.MessageStatus !== undefined && params.Body === undefined;
}
