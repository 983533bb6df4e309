import type { FileStore } from './file-store';

/** A folder changed more recently may belong to a step still running (here or on another instance). */
export const UNCHANGED_FOR_MS = 10 * 60 * 1000;
/** Folders looked at per sweep, so a sweep over a million Sessions' folders stays short. */
const MOST_PER_SWEEP = 5000;

/**
 * Received files of Sessions that no store knows are removed: a step that ran again after a crash
 * (at least once) opened its Session anew and downloaded the files again, and the first attempt's
 * folder belonged to nobody; left, it would fill Workspace storage until received files are
 * refused (9007). `known` answers whether a Session id is live (true also when a store cannot say).
 */
export async function forgetFilesOfGoneSessions(files: FileStore, known: (sessionId: string) => Promise<boolean>, now = Date.now()): Promise<number> {
  let removed = 0;
  let looked = 0;
  for await (const folder of files.sessionFolders()) {
    if (++looked > MOST_PER_SWEEP) break;
    if (now - folder.changed < UNCHANGED_FOR_MS) continue;
    if (await known(folder.sessionId)) continue;
    await files.forget(folder.sessionId).catch(() => undefined);
    removed++;
  }
  return removed;
}
