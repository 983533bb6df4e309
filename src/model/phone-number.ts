/**
 * A phone number in E.164 form (+, then up to 15 digits, the first not 0): how the provider writes
 * every number it sends us and takes every number we send it. One rule for calls, texts and Caller IDs.
 */
export function isE164(value: string): boolean {
  return /^\+[1-9]\d{1,14}$/.test(value);
}
