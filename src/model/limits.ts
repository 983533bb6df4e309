/** The package's limits (sizes, counts, timeouts), in one place. */
export const MB = 1024 * 1024;

export const INBOUND_FILES = { maxFiles: 5, maxBytes: 10 * MB } as const;
export const OUTBOUND_FILES = { maxFiles: 10, maxBytes: 15 * MB } as const;

/** Messenger media sent as real attachments; anything else goes as a link. */
export const MESSENGER_MEDIA = {
  imageTypes: ['image/jpeg', 'image/png'],
  imageMaxBytes: 5 * MB,
  otherTypes: [
    'audio/ogg',
    'audio/amr',
    'audio/3gpp',
    'video/3gpp',
    'audio/aac',
    'audio/mpeg',
    'video/mp4',
    'application/pdf',
    'application/msword',
    'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
    'application/vnd.openxmlformats-officedocument.presentationml.presentation',
    'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  ],
  otherMaxBytes: 16 * MB,
} as const;

/** Characters the provider takes in one message's Body; a longer one is refused (Twilio error 21617). */
export const MESSAGE_BODY_MAX_CHARS = 1600;

/** Signed media link validity. */
export const LINK_TTL = { messenger: 24 * 3600, sms: 7 * 24 * 3600 } as const;

/** Seconds a Session may sit without a message before it is released, by Channel. */
export const DEFAULT_IDLE_TIMEOUT: Record<string, number> = {
  TeamChatChannel: 24 * 3600,
  TelcoVoice: 2 * 3600,
  TelcoMessagingSms: 24 * 3600,
  TelcoMessagingMessenger: 24 * 3600,
  Chat: 3600,
};

export const VOICE_SILENCE_SECONDS = 5;
export const VOICE_RECORD_MAX_SECONDS = 3600;
