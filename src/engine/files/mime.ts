/** The file types conversations carry, both ways: extension <-> MIME type. */
const TYPES: Array<[string, string]> = [
  ['jpg', 'image/jpeg'], ['jpeg', 'image/jpeg'], ['png', 'image/png'], ['gif', 'image/gif'], ['webp', 'image/webp'],
  ['pdf', 'application/pdf'], ['txt', 'text/plain'], ['csv', 'text/csv'], ['json', 'application/json'],
  ['vcf', 'text/vcard'], ['ogg', 'audio/ogg'], ['amr', 'audio/amr'], ['3gp', 'audio/3gpp'], ['aac', 'audio/aac'],
  ['mp3', 'audio/mpeg'], ['wav', 'audio/wav'], ['mp4', 'video/mp4'], ['mov', 'video/quicktime'],
  ['doc', 'application/msword'],
  ['docx', 'application/vnd.openxmlformats-officedocument.wordprocessingml.document'],
  ['pptx', 'application/vnd.openxmlformats-officedocument.presentationml.presentation'],
  ['xlsx', 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet'],
  ['zip', 'application/zip'],
];

export function typeFromName(name: string): string {
  const ext = name.includes('.') ? name.slice(name.lastIndexOf('.') + 1).toLowerCase() : '';
  return TYPES.find(([e]) => e === ext)?.[1] ?? 'application/octet-stream';
}

export function extensionFromType(type: string): string {
  const bare = type.split(';')[0].trim().toLowerCase();
  if (bare === 'image/jpeg') return 'jpg';
  return TYPES.find(([, t]) => t === bare)?.[0] ?? 'bin';
}
