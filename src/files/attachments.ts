import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { TaskError } from '../model/errors';
import { OUTBOUND_FILES } from '../model/limits';
import { lookupPath, resolvePlaceholders } from '../model/placeholders';
import type { FileStore } from './file-store';
import { filesOf, isFileListLike, isFileValue } from './file-values';
import { typeFromName } from './mime';

/** A file to send, resolved from an Attachments field. */
export interface OutgoingFile {
  name: string;
  type: string;
  size: number;
  read(): Promise<Buffer>;
}

/**
 * Resolves an Attachments field (comma-separated `ref-session:<variable>`, `ref-storage:<name>`,
 * `ref-workspace:<name>`, placeholders allowed) into files, within the outbound limits
 * (10 files, 15 MB). An unusable entry stops the Task with 3005 before anything is sent.
 */
export async function resolveAttachments(field: string | undefined, vars: Record<string, unknown>, store: FileStore): Promise<OutgoingFile[]> {
  const resolved = resolvePlaceholders(field, vars).trim();
  if (!resolved) return [];
  const files: OutgoingFile[] = [];
  for (const raw of resolved.split(',')) {
    const entry = raw.trim();
    if (!entry) continue;
    files.push(...(await resolveEntry(entry, vars, store)));
  }
  if (files.length > OUTBOUND_FILES.maxFiles) {
    throw new TaskError(3005, `Attachments: ${files.length} files, at most ${OUTBOUND_FILES.maxFiles} per message`);
  }
  const total = files.reduce((sum, f) => sum + f.size, 0);
  if (total > OUTBOUND_FILES.maxBytes) {
    throw new TaskError(3005, `Attachments: ${total} bytes, at most ${OUTBOUND_FILES.maxBytes / 1048576} MB per message`);
  }
  return files;
}

async function resolveEntry(entry: string, vars: Record<string, unknown>, store: FileStore): Promise<OutgoingFile[]> {
  const colon = entry.indexOf(':');
  const kind = colon > 0 ? entry.slice(0, colon) : '';
  const ref = colon > 0 ? entry.slice(colon + 1).trim() : '';
  if (kind === 'ref-session') {
    const value = lookupPath(vars, ref.replace(/^\{|\}$/g, ''));
    if (isFileValue(value) || (isFileListLike(value) && filesOf(value).length === value.count)) {
      return filesOf(value).map((file) => ({
        name: file.name,
        type: file.type || typeFromName(file.name),
        size: file.size,
        read: () => store.read(file),
      }));
    }
    throw new TaskError(3005, `Attachments: ref-session:${ref} is not a file or file list`);
  }
  if (kind === 'ref-storage' || kind === 'ref-workspace') {
    const found = await store.named(kind === 'ref-storage' ? 'storage' : 'workspace', ref);
    if (!found) throw new TaskError(3005, `Attachments: ${entry} is missing or not a file`);
    const name = basename(ref);
    return [{ name, type: typeFromName(name), size: found.size, read: () => readFile(found.path) }];
  }
  throw new TaskError(3005, `Attachments: "${entry}" is not ref-session:, ref-storage: or ref-workspace:`);
}
