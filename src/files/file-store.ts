import { createHash } from 'node:crypto';
import { mkdir, opendir, readFile, rm, stat, writeFile, readdir } from 'node:fs/promises';
import { join, resolve, sep } from 'node:path';
import { TaskError } from '../model/errors';
import type { FileValue } from './file-values';
import { packageDir } from './package-dir';

export interface FileStoreSettings {
  /** `workspace` (default): bytes in files under the user dir; `inline`: base64 in the Session. */
  fileStorage?: 'workspace' | 'inline';
  /** Bytes the Workspace storage may hold; received files past it are skipped with 9007. */
  workspaceQuota?: number;
  /** Instead of `<userDir>/channel-sessions` (a directory several instances share). */
  fileDirectory?: string;
}

const DEFAULT_QUOTA = 500 * 1024 * 1024;

/**
 * The package's storage under the Node-RED user dir:
 * - `channel-sessions/workspace/`: Workspace storage (`ref-workspace:`); received files under `sessions/<id>/`;
 * - `channel-sessions/storage/`: saved files (`ref-storage:`).
 */
export class FileStore {
  readonly workspaceDir: string;
  readonly storageDir: string;
  private readonly mode: 'workspace' | 'inline';
  private readonly quota: number;
  private used: number | undefined;

  constructor(userDir: string, settings: FileStoreSettings = {}) {
    this.workspaceDir = join(packageDir(userDir, settings.fileDirectory), 'workspace');
    this.storageDir = join(packageDir(userDir, settings.fileDirectory), 'storage');
    this.mode = settings.fileStorage === 'inline' ? 'inline' : 'workspace';
    this.quota = settings.workspaceQuota ?? DEFAULT_QUOTA;
  }

  /**
   * Keeps a received file for a Session; 9007 when Workspace storage is full. Its name in the
   * Session's folder begins with a digest of its bytes: every message's first photo is called
   * `file-1.jpg` and Slack uploads share names, so a name alone let a later message's file overwrite
   * an earlier one's; and a step that runs again after a crash writes its own copy again rather than
   * leaving a second one behind. Paths kept before (`<n>-<name>`) are read as they are.
   */
  async keep(sessionId: string, file: { name: string; type: string; data: Buffer }): Promise<FileValue> {
    const base = { name: file.name, type: file.type, size: file.data.length };
    if (this.mode === 'inline') return { ...base, data: file.data.toString('base64') };
    const relative = ['sessions', sessionId, `${digestOf(file.data)}-${safeName(file.name)}`].join('/');
    const target = join(this.workspaceDir, ...relative.split('/'));
    // The same bytes kept again (a step run again, a file sent twice) take no more room.
    const replaced = await sizeOf(target);
    const used = (await this.usedBytes()) - replaced;
    if (used + file.data.length > this.quota) {
      throw new TaskError(9007, `Workspace storage is full (${this.quota} bytes); ${file.name} was not kept`);
    }
    await mkdir(join(this.workspaceDir, 'sessions', sessionId), { recursive: true });
    await writeFile(target, file.data);
    this.used = used + file.data.length;
    return { ...base, path: relative };
  }

  async read(file: FileValue): Promise<Buffer> {
    if (typeof file.data === 'string') return Buffer.from(file.data, 'base64');
    if (typeof file.path === 'string') return readFile(this.inside(this.workspaceDir, file.path));
    throw new TaskError(3005, `${file.name} has no stored bytes`);
  }

  /** A named file in Workspace storage or saved-file storage; undefined when there is none. */
  async named(area: 'workspace' | 'storage', name: string): Promise<{ path: string; size: number } | undefined> {
    const dir = area === 'workspace' ? this.workspaceDir : this.storageDir;
    let path: string;
    try {
      path = this.inside(dir, name);
    } catch {
      return undefined;
    }
    try {
      const info = await stat(path);
      return info.isFile() ? { path, size: info.size } : undefined;
    } catch {
      return undefined;
    }
  }

  /** Frees what a finished Session received. */
  async forget(sessionId: string): Promise<void> {
    if (this.mode === 'inline') return;
    this.used = undefined;
    await rm(join(this.workspaceDir, 'sessions', safeName(sessionId)), { recursive: true, force: true });
  }

  /** Each Session's folder of received files, with when it last changed; read as a stream, not listed whole. */
  async *sessionFolders(): AsyncGenerator<{ sessionId: string; changed: number }> {
    if (this.mode === 'inline') return;
    const root = join(this.workspaceDir, 'sessions');
    let dir;
    try {
      dir = await opendir(root);
    } catch {
      return; // none received yet
    }
    for await (const entry of dir) {
      if (!entry.isDirectory()) continue;
      try {
        yield { sessionId: entry.name, changed: (await stat(join(root, entry.name))).mtimeMs };
      } catch {
        // removed meanwhile
      }
    }
  }

  private inside(dir: string, relative: string): string {
    const path = resolve(dir, relative);
    if (!path.startsWith(resolve(dir) + sep)) throw new TaskError(3005, `${relative} is outside the storage folder`);
    return path;
  }

  private async usedBytes(): Promise<number> {
    if (this.used === undefined) this.used = await folderSize(this.workspaceDir);
    return this.used;
  }
}

function safeName(name: string): string {
  return (
    name
      .replace(/[^\w.\- ]+/g, '_')
      .replace(/^\.+/, '_')
      .slice(0, 120) || 'file'
  );
}

/** The first 16 hex digits of the bytes' SHA-256: files that differ never meet in one Session's folder. */
function digestOf(data: Buffer): string {
  return createHash('sha256').update(data).digest('hex').slice(0, 16);
}

async function sizeOf(path: string): Promise<number> {
  return stat(path).then(
    (info) => (info.isFile() ? info.size : 0),
    () => 0,
  );
}

async function folderSize(dir: string): Promise<number> {
  let total = 0;
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) total += await folderSize(path);
    // A Session that ended meanwhile has its folder removed: what is gone takes no room.
    else if (entry.isFile())
      total += await stat(path).then(
        (info) => info.size,
        () => 0,
      );
  }
  return total;
}
