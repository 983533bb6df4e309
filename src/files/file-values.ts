/**
 * File values and file lists as flows see them: a file is `{ name, type, size }` plus where
 * its bytes are kept (`path` in Workspace storage, or `data` inline as base64); a list is
 * `{ count, names, "0": file, ... }`.
 */
export interface FileValue {
  name: string;
  type: string;
  size: number;
  /** Relative to the package's Workspace storage. */
  path?: string;
  /** Base64 bytes, when File storage is inline. */
  data?: string;
}

export interface FileList {
  count: number;
  names: string;
  [index: number]: FileValue;
}

/** Metadata only: what `{<variable>_files}` keeps when an InputTask has no Store files in. */
export interface FileInfo {
  name: string;
  type: string;
  size: number;
}

export function fileList(files: FileValue[]): FileList {
  const list: FileList = { count: files.length, names: files.map((f) => f.name).join(', ') };
  files.forEach((file, i) => {
    list[i] = file;
  });
  return list;
}

export function filesOf(list: unknown): FileValue[] {
  if (isFileValue(list)) return [list];
  if (!isFileListLike(list)) return [];
  const files: FileValue[] = [];
  for (let i = 0; i < list.count; i++) {
    const file = (list as unknown as Record<string, unknown>)[String(i)];
    if (isFileValue(file)) files.push(file);
  }
  return files;
}

export function isFileValue(value: unknown): value is FileValue {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as FileValue).name === 'string' &&
    typeof (value as FileValue).size === 'number' &&
    (typeof (value as FileValue).path === 'string' || typeof (value as FileValue).data === 'string')
  );
}

export function isFileListLike(value: unknown): value is FileList {
  return typeof value === 'object' && value !== null && typeof (value as FileList).count === 'number';
}
