/** The Channels a Session can run on (`msg.session.channel`). */
export const CHANNELS = ['TeamChatChannel', 'TelcoVoice', 'TelcoMessagingSms', 'TelcoMessagingMessenger', 'Chat'] as const;

export type ChannelName = (typeof CHANNELS)[number];

/** The editor's test chat runs every start on this Channel. */
export const TEST_CHANNEL: ChannelName = 'Chat';

/**
 * Each Channel as a sentence names it ("You reached us on WhatsApp"), for flows that tell the
 * person where they are: `{execution.channelName}`. The identifiers above are for switches.
 */
export const CHANNEL_WORDS: Record<ChannelName, string> = {
  TeamChatChannel: 'Slack',
  TelcoVoice: 'the phone',
  TelcoMessagingSms: 'SMS',
  TelcoMessagingMessenger: 'WhatsApp',
  Chat: 'the Test chat',
};
