/**
 * The text of a value a flow or a provider handed us: strings as they are, nothing as '', anything
 * else as JSON, so an object never reaches a person as "[object Object]".
 */
export function textOf(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined || value === null) return '';
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  try {
    return JSON.stringify(value) ?? '';
  } catch {
    return '';
  }
}
