import type { ChannelName } from '../model/channels';
import { fileList, type FileList } from '../files/file-values';
import type { Opening, StartKind } from '../engine/starts';
import { withMessengerPrefix } from './addresses';
import type { SharedLocation } from './location';

export type MessagingKind = 'sms' | 'messenger';

export const START_TYPES: Record<MessagingKind, string> = { sms: 'telco-sms-start', messenger: 'telco-messenger-start' };
export const CHANNEL_OF_KIND: Record<MessagingKind, ChannelName> = { sms: 'TelcoMessagingSms', messenger: 'TelcoMessagingMessenger' };

/** A sample sender for test chats whose test data names none. */
const SAMPLE_FROM = '+15555550100';

export interface OpeningFields {
  text: string;
  from: string;
  to: string;
  messageId: string;
  profileName: string;
  /** An opening that is a shared location: `{message.location}`. */
  location?: SharedLocation;
}

/** `{message}`, the messaging start's variable, and who talks to whom. */
export function messageOpening(channel: ChannelName, fields: OpeningFields, files: FileList, isTest: boolean): Opening {
  const value = {
    text: fields.text,
    files,
    from: fields.from,
    to: fields.to,
    messageId: fields.messageId,
    // Empty on SMS: the readers of the webhook and of test data only fill it for the messenger.
    profileName: fields.profileName,
    channel,
    isTest,
    ...(fields.location ? { location: fields.location } : {}),
  };
  return {
    value,
    text: fields.text,
    files: files.count ? files.names.split(', ') : undefined,
    sender: fields.from,
    recipient: fields.to,
  };
}

/** Test data as the start's `{message}` fields; the messenger start adds the address prefix when missing. */
function testFields(kind: MessagingKind, testData: Record<string, unknown>, text: string): OpeningFields {
  const str = (v: unknown) => (typeof v === 'string' ? v.trim() : typeof v === 'number' ? String(v) : '');
  const from = str(testData.from) || SAMPLE_FROM;
  const to = str(testData.to);
  return {
    text,
    from: kind === 'messenger' ? withMessengerPrefix(from) : from,
    to: kind === 'messenger' ? withMessengerPrefix(to) : to,
    messageId: '',
    profileName: kind === 'messenger' ? str(testData.profileName) : '',
  };
}

export function messagingStartKind(kind: MessagingKind): StartKind {
  return {
    type: START_TYPES[kind],
    channel: CHANNEL_OF_KIND[kind],
    testOpening(testData, channel) {
      const text = typeof testData.text === 'string' ? testData.text : '';
      // Without a text the test chat asks for the opening message.
      if (!text) return undefined;
      return messageOpening(channel, testFields(kind, testData, text), fileList([]), true);
    },
    testOpeningFromMessage(testData, text, files, channel) {
      return messageOpening(channel, testFields(kind, testData, text), files, true);
    },
  };
}
