/**
 * `{a.b.c}` placeholders resolved against the Session variables (`msg.vars`).
 * An unknown path resolves to empty text. `escape` is applied to each substituted value only,
 * so a channel can make user content literal without touching the author's own markup.
 */
const PLACEHOLDER = /\{([A-Za-z_$][\w$-]*(?:\.[\w$-]+)*)\}/g;

export function lookupPath(vars: unknown, path: string): unknown {
  let current: unknown = vars;
  for (const part of path.split('.')) {
    if (current === null || current === undefined || typeof current !== 'object') return undefined;
    current = (current as Record<string, unknown>)[part];
  }
  return current;
}

export function valueAsText(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  if (isFileList(value)) return value.names;
  if (isFileValue(value)) return value.name;
  try {
    return JSON.stringify(value);
  } catch {
    return '';
  }
}

export function resolvePlaceholders(template: string | undefined, vars: unknown, escape: (text: string) => string = (text) => text): string {
  if (!template) return '';
  return template.replace(PLACEHOLDER, (_match, path: string) => escape(valueAsText(lookupPath(vars, path))));
}

/** A field that is exactly one placeholder, e.g. `{order}`: its path, else undefined. */
export function soloPlaceholder(text: string): string | undefined {
  const match = /^\{([A-Za-z_$][\w$-]*(?:\.[\w$-]+)*)\}$/.exec(text.trim());
  return match ? match[1] : undefined;
}

function isFileList(value: unknown): value is { names: string; count: number } {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { count?: unknown }).count === 'number' &&
    typeof (value as { names?: unknown }).names === 'string'
  );
}

function isFileValue(value: unknown): value is { name: string } {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { name?: unknown }).name === 'string' &&
    typeof (value as { size?: unknown }).size === 'number'
  );
}
