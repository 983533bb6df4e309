/** The Channels a Session can run on (`msg.session.channel`). */
export const CHANNELS = ['TeamChatChannel', 'TelcoVoice', 'TelcoMessagingSms', 'TelcoMessagingMessenger', 'Chat'] as const;

export type ChannelName = (typeof CHANNELS)[number];

/** The editor's test chat runs every start on this Channel. */
export const TEST_CHANNEL: ChannelName = 'Chat';
