import { textOf } from '../model/text';
import type { ChannelName } from '../model/channels';
import { fileList, type FileList } from '../files/file-values';
import type { Opening, StartKind } from '../engine/starts';

/** What `{teamchat}`, the team-chat start's variable, holds. */
export interface TeamChatOpening {
  text: string;
  files: FileList;
  from: string;
  profileName: string;
  to: string;
  team: string;
  thread: string;
  messageId: string;
  channel: 'TeamChatChannel' | 'Chat';
  isTest: boolean;
  /** In an assistant thread: the channel the person looks at (assistant-threads.ts). */
  context?: { channelId: string; teamId: string; enterpriseId: string };
}

export function teamchatOpening(value: TeamChatOpening): Opening {
  return {
    value: value as unknown as Record<string, unknown>,
    text: value.text,
    files: value.files.count ? value.files.names.split(', ') : undefined,
    sender: value.from,
    recipient: value.to,
  };
}

const text = textOf;

function fromTestData(testData: Record<string, unknown>, message: string, files: FileList, channel: ChannelName): Opening {
  return teamchatOpening({
    text: message,
    files,
    from: text(testData.from) || 'U0TESTUSER',
    profileName: text(testData.profileName),
    to: text(testData.to) || 'D0TESTCHAT',
    team: text(testData.team),
    thread: text(testData.thread),
    messageId: '',
    channel: channel === 'TeamChatChannel' ? channel : 'Chat',
    isTest: true,
  });
}

/**
 * The team-chat start event: Sessions on TeamChatChannel begin here with `{teamchat}`. In the test
 * chat the test data (`text`, `from`, `to`, optional `team`, `thread`, `profileName`) stands in for
 * the message; without a text the start asks for it.
 */
export const TEAMCHAT_START: StartKind = {
  type: 'teamchat-start',
  channel: 'TeamChatChannel',
  testOpening(testData, channel) {
    const message = text(testData.text);
    return message ? fromTestData(testData, message, fileList([]), channel) : undefined;
  },
  testOpeningFromMessage(testData, message, files, channel) {
    return fromTestData(testData, message, files, channel);
  },
};
