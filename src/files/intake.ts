import { TaskError } from '../model/errors';
import { INBOUND_FILES } from '../model/limits';
import type { FileStore } from './file-store';
import { fileList, type FileInfo, type FileList, type FileValue } from './file-values';

/** A file a person sent, as a module announces it before anything is downloaded. */
export interface IncomingFile {
  name: string;
  type: string;
  /** Size the provider declares, when it does; checked before downloading. */
  size?: number;
  /** Why the module cannot fetch it (deleted, foreign host, no download link); it is skipped. */
  skipReason?: string;
  fetch(): Promise<Buffer>;
}

export interface Warning {
  code: 4022 | 9007;
  message: string;
}

export interface IntakeResult {
  list: FileList;
  warnings: Warning[];
}

/**
 * Downloads and keeps a message's files within the inbound limits (5 files, 10 MB): extra,
 * oversized, unreadable or unfetchable files are skipped with a warning; the message still arrives.
 */
export async function receiveFiles(files: IncomingFile[], store: FileStore, sessionId: string): Promise<IntakeResult> {
  const kept: FileValue[] = [];
  const warnings: Warning[] = [];
  let total = 0;
  for (const [index, file] of files.entries()) {
    if (index >= INBOUND_FILES.maxFiles) {
      warnings.push({ code: 4022, message: `${file.name} skipped: at most ${INBOUND_FILES.maxFiles} files are kept per message` });
      continue;
    }
    if (file.skipReason) {
      warnings.push({ code: 4022, message: `${file.name} skipped: ${file.skipReason}` });
      continue;
    }
    if (file.size !== undefined && total + file.size > INBOUND_FILES.maxBytes) {
      warnings.push({ code: 4022, message: `${file.name} skipped: over the ${INBOUND_FILES.maxBytes / 1048576} MB limit per message` });
      continue;
    }
    let data: Buffer;
    try {
      data = await file.fetch();
    } catch (err) {
      warnings.push({ code: 4022, message: `${file.name} skipped: could not be downloaded: ${(err as Error).message}` });
      continue;
    }
    if (total + data.length > INBOUND_FILES.maxBytes) {
      warnings.push({ code: 4022, message: `${file.name} skipped: over the ${INBOUND_FILES.maxBytes / 1048576} MB limit per message` });
      continue;
    }
    try {
      kept.push(await store.keep(sessionId, { name: file.name, type: file.type, data }));
      total += data.length;
    } catch (err) {
      if (err instanceof TaskError && err.code === 9007) warnings.push({ code: 9007, message: err.message });
      else warnings.push({ code: 4022, message: `${file.name} skipped: could not be kept (${(err as Error).message})` });
    }
  }
  return { list: fileList(kept), warnings };
}

/** Name, type and size only, for `{<variable>_files}` when nothing is downloaded. */
export function describeFiles(files: IncomingFile[]): FileInfo[] {
  return files.map((f) => ({ name: f.name, type: f.type, size: f.size ?? 0 }));
}
