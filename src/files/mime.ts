import mime from 'mime-types';

/**
 * The database lists a type's extensions in registration order, not the one people know: it would
 * name a WhatsApp voice note `.oga` and an MP3 `.mpga`. For these types the familiar one wins.
 */
const FAMILIAR: Record<string, string> = {
  'image/jpeg': 'jpg',
  'audio/ogg': 'ogg',
  'audio/mpeg': 'mp3',
  'audio/aac': 'aac',
  'audio/3gpp': '3gp',
  'video/quicktime': 'mov',
  'text/vcard': 'vcf',
};

/** The MIME type of a file name, from its extension; unknown ones are plain bytes. */
export function typeFromName(name: string): string {
  // lookup() takes a bare word as an extension: a file named just "pdf" is not a PDF.
  return (name.includes('.') && mime.lookup(name)) || 'application/octet-stream';
}

/** The extension for a MIME type (parameters such as `; codecs=opus` ignored); `bin` when unknown. */
export function extensionFromType(type: string): string {
  const bare = type.split(';')[0].trim().toLowerCase();
  return FAMILIAR[bare] ?? (mime.extension(bare) || 'bin');
}
