import { textOf } from '../../model/text';
import { isAbsolute, join, resolve } from 'node:path';

/** What settings.js gives the sqlite-context module. */
export interface SqliteContextConfig {
  /** The database file; default `<userDir>/channel-sessions.db`, the durable default's own file. */
  path: string;
  /** 'FULL' also survives a power loss, at a disk flush per write. */
  synchronous: 'NORMAL' | 'FULL';
}

/**
 * Checks the `config` of a contextStorage entry. Node-RED copies `settings.userDir` into it; a
 * relative `path` is taken from the user dir too, as Node-RED's own localfilesystem store does.
 */
export function readSqliteConfig(raw: unknown): SqliteContextConfig {
  const config = (raw ?? {}) as Record<string, unknown>;
  const userDir = textOf((config.settings as { userDir?: unknown } | undefined)?.userDir) || process.cwd();
  if (config.path !== undefined && (typeof config.path !== 'string' || !config.path)) {
    throw new Error('the sqlite-context store config.path must be the path of a database file');
  }
  const synchronous = config.synchronous ?? 'NORMAL';
  if (synchronous !== 'NORMAL' && synchronous !== 'FULL') {
    throw new Error(`the sqlite-context store config.synchronous must be 'NORMAL' or 'FULL', not ${JSON.stringify(synchronous)}`);
  }
  const path = typeof config.path === 'string' ? (isAbsolute(config.path) ? config.path : join(userDir, config.path)) : join(userDir, 'channel-sessions.db');
  return { path: resolve(path), synchronous };
}
