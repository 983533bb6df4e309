import { join } from 'node:path';

/**
 * Where the package keeps files (Workspace storage, saved files, messaging media and its link
 * secret): `channelSessions.fileDirectory` when set, else `<userDir>/channel-sessions`. Several
 * instances serving one Environment point it at one shared directory, so a file kept by a Session
 * on one instance, and a signed media link made there, are served by every instance.
 */
export function packageDir(userDir: string, fileDirectory?: unknown): string {
  return typeof fileDirectory === 'string' && fileDirectory ? fileDirectory : join(userDir, 'channel-sessions');
}
