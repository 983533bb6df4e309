/** What settings.js gives the redis-context module (its `config` in `contextStorage`). */
export interface RedisStoreConfig {
  /** `redis://` or `rediss://`, with user and password when the server wants them. */
  url: string;
  /** Key prefix shared by every instance of one deployment. */
  prefix: string;
}

export const DEFAULT_PREFIX = 'channel-sessions:';

/**
 * Checks the `config` of a contextStorage entry. Throws a message that names what is wrong and
 * never repeats the password (Node-RED prints it when the store fails to load).
 */
export function readConfig(raw: unknown): RedisStoreConfig {
  const config = (raw ?? {}) as Record<string, unknown>;
  if (typeof config.url !== 'string' || !config.url) {
    throw new Error('the redis-context store needs config.url (redis://host:6379 or rediss://user:password@host:6380)');
  }
  let url: URL;
  try {
    url = new URL(config.url);
  } catch {
    throw new Error('the redis-context store config.url is not a URL (expected redis://host:6379 or rediss://…)');
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') {
    throw new Error(`the redis-context store config.url must start with redis:// or rediss://, not ${url.protocol}//`);
  }
  const prefix = config.prefix === undefined ? DEFAULT_PREFIX : config.prefix;
  if (typeof prefix !== 'string') throw new Error('the redis-context store config.prefix must be text');
  return { url: config.url, prefix };
}

/** The URL as it may appear in a log line: scheme, host, port and database, never user or password. */
export function describeUrl(raw: string): string {
  try {
    const url = new URL(raw);
    return `${url.protocol}//${url.host}${url.pathname && url.pathname !== '/' ? url.pathname : ''}`;
  } catch {
    return 'an unreadable Redis URL';
  }
}

/** A URL part as its percent escapes say; one that does not decode stays as written (and is still taken out). */
function decoded(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** An error message with any credentials of the URL taken out (client errors may quote it). */
export function redact(message: string, raw: string): string {
  let text = message;
  try {
    const url = new URL(raw);
    for (const secret of [url.password, decoded(url.password), url.username, decoded(url.username)]) {
      if (secret) text = text.split(secret).join('***');
    }
  } catch {
    // nothing to take out of an unreadable URL
  }
  return text;
}
