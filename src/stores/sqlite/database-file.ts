import { accessSync, closeSync, constants, existsSync, openSync, readFileSync, readSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Say } from '../../model/texts';
import { logPragmas } from './checkpoints';
import { createSchema } from './schema';
import {
  SQLITE_CANTOPEN,
  SQLITE_CORRUPT,
  SQLITE_IOERR,
  SQLITE_NOTADB,
  SQLITE_READONLY,
  sqliteCode,
  type DatabaseConstructor,
  type DatabaseSync,
} from './sqlite';

/*
 * The database file behind the Session store (and the sqlite-context store): opened with its
 * tables made or upgraded, a damaged or emptied file set aside and named, a store lost since an
 * earlier run told from a new one (the `.opened` marker), a write-ahead log cut short named, and
 * every connection closed at exit. Nothing here knows Sessions.
 */

export interface DatabaseFileOptions {
  path: string;
  /** 'FULL' also survives a power loss, at the cost of a disk flush per step; 'NORMAL' survives a crash of the process. */
  synchronous: 'NORMAL' | 'FULL';
  /** Where the store says what it set aside or could not do. */
  log: { info?(line: string): void; warn(line: string): void; error(line: string): void };
  /** The words of those lines, in the runtime's language. */
  say: Say;
}

/** Errors whose cause the file system can tell. */
const EXPLAINED: ReadonlySet<number> = new Set([SQLITE_READONLY, SQLITE_IOERR, SQLITE_CANTOPEN]);

/**
 * A connection to the store's database file, its tables made, a damaged file set aside; closed at
 * exit. The sqlite-context store opens its own with this.
 */
export function openDatabaseFile(Database: DatabaseConstructor, options: DatabaseFileOptions): DatabaseSync {
  const db = openOrSetAside(Database, options);
  closeAtExit(db);
  return db;
}

/** Each open connection's exit listener, removed when the connection is closed first. */
const closeAtExitOf = new WeakMap<DatabaseSync, () => void>();

/**
 * Node-RED stops with process.exit() and closes no store. A connection closed at exit folds its
 * write-ahead log into the database file and removes it, so after a stop the .db file alone holds
 * everything (a backup of that one file is whole). Every step is a synchronous transaction, so
 * none is open at exit.
 */
function closeAtExit(db: DatabaseSync): void {
  const close = () => closeQuietly(db);
  closeAtExitOf.set(db, close);
  process.once('exit', close);
}

export function closeQuietly(db: DatabaseSync): void {
  const atExit = closeAtExitOf.get(db);
  if (atExit) {
    closeAtExitOf.delete(db);
    process.removeListener('exit', atExit);
  }
  try {
    db.close();
  } catch {
    // already closed, or broken: nothing left to fold in
  }
}

/**
 * Opens the database; a file that is not a database (or is corrupt) is renamed beside it, named in
 * the log, and a new one started, so Node-RED always starts.
 */
function openOrSetAside(Database: DatabaseConstructor, options: DatabaseFileOptions): DatabaseSync {
  const opened = lostSinceOpened(options);
  let db: DatabaseSync;
  try {
    db = openDatabase(Database, options);
  } catch (err) {
    if (!isDamaged(err)) throw err;
    setAside(options, err);
    db = openDatabase(Database, options);
  }
  if (!opened) markOpened(options.path);
  return db;
}

/**
 * Written beside the database once it has been opened: SQLite takes a missing or empty file for a
 * new database, so without it a store lost between two runs (deleted, emptied by a failed copy or
 * restore) would start over without a word.
 */
function markerOf(path: string): string {
  return `${path}.opened`;
}

/** When the store was first opened, if it ever was (its marker). */
function openedBefore(path: string, say: Say): string | undefined {
  try {
    const { since } = JSON.parse(readFileSync(markerOf(path), 'utf8')) as { since?: unknown };
    return typeof since === 'string' ? since : say('runtime.log.store.unknownTime');
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ENOENT' ? undefined : say('runtime.log.store.unknownTime');
  }
}

function markOpened(path: string): void {
  try {
    writeFileSync(markerOf(path), JSON.stringify({ since: new Date().toISOString() }) + '\n', { flag: 'wx' });
  } catch {
    // already there, or a directory it cannot write (then the store cannot be written either, and says so)
  }
}

/**
 * Before SQLite opens the file: a store opened before whose file is gone or empty now lost what it
 * held, and is named (an empty file is set aside as a damaged one is); a store never opened is new.
 * Returns whether it was opened before.
 */
function lostSinceOpened(options: DatabaseFileOptions): boolean {
  const { say } = options;
  const since = openedBefore(options.path, say);
  let size: number | undefined;
  try {
    size = statSync(options.path).size;
  } catch {
    size = undefined;
  }
  if (size === undefined) {
    if (since) options.log.warn(`[channel-sessions] ${say('runtime.log.store.missing', { path: options.path, since })}`);
    else options.log.info?.(`[channel-sessions] ${say('runtime.log.store.started', { path: options.path })}`);
    return since !== undefined;
  }
  // An empty file beside a write-ahead log with content is replayed from that log by SQLite.
  if (size > 0 || hasContent(`${options.path}-wal`)) return since !== undefined;
  if (!since) {
    options.log.info?.(`[channel-sessions] ${say('runtime.log.store.emptyFile', { path: options.path })}`);
    return false;
  }
  const aside = asideName(options.path);
  renameSync(options.path, aside);
  for (const suffix of ['-wal', '-shm']) {
    if (existsSync(options.path + suffix)) renameSync(options.path + suffix, aside + suffix);
  }
  options.log.warn(`[channel-sessions] ${say('runtime.log.store.emptied', { path: options.path, since, aside })}`);
  return true;
}

function hasContent(path: string): boolean {
  try {
    return statSync(path).size > 0;
  } catch {
    return false;
  }
}

function asideName(path: string): string {
  return `${path}.corrupt-${new Date().toISOString().replace(/[:.]/g, '-')}`;
}

export function isDamaged(err: unknown): boolean {
  const code = sqliteCode(err);
  return code === SQLITE_CORRUPT || code === SQLITE_NOTADB;
}

/** Moves a damaged database (and its log) beside it, for a person to inspect, and says where. */
export function setAside(options: DatabaseFileOptions, err: unknown): void {
  const aside = asideName(options.path);
  const size = statSync(options.path).size;
  renameSync(options.path, aside);
  for (const suffix of ['-wal', '-shm']) {
    if (existsSync(options.path + suffix)) renameSync(options.path + suffix, aside + suffix);
  }
  const said = { path: options.path, message: (err as Error).message, size: describeSize(size, options.say), aside };
  options.log.error(`[channel-sessions] ${options.say('runtime.log.store.notDatabase', said)}`);
}

/** What the size of a damaged file says: shortened to SQLite's 100-byte header (or less), or the bytes there are. */
function describeSize(size: number, say: Say): string {
  return size <= SQLITE_HEADER ? say('runtime.log.store.sizeCut', { size }) : say('runtime.log.store.size', { size });
}

const SQLITE_HEADER = 100;

/**
 * The most a connection keeps of the file's pages in memory, in KiB (SQLite's default is 2,000).
 * A busy store's steps touch pages all over the file: each Session's row, the tail of its history,
 * the dedupe keys' B-tree. Past a few thousand Sessions those outgrow 2 MB, and a page not cached
 * is read and decoded again at each step: with 20,000 Sessions a step cost 120-128 µs of CPU in the
 * store against 97-104 with this (BENCHMARKS.md). SQLite takes the memory only as pages are used,
 * so a small database costs no more.
 */
export const PAGE_CACHE_KB = 16_384;

function openDatabase(Database: DatabaseConstructor, options: DatabaseFileOptions): DatabaseSync {
  const cut = walCutShort(options.path, options.say);
  const db = new Database(options.path, { timeout: 5000 });
  try {
    db.exec('PRAGMA journal_mode = WAL');
    db.exec(`PRAGMA synchronous = ${options.synchronous}`);
    db.exec(`PRAGMA cache_size = -${PAGE_CACHE_KB}`);
    logPragmas(db);
    createSchema(db);
    // A real write: SQLite opens a file it may not write read-only, and says so only at the first
    // write; the store would then look fine until a webhook is refused.
    db.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES ('opened', ?)").run(new Date().toISOString());
    if (cut) options.log.warn(`[channel-sessions] ${cut}`);
    return db;
  } catch (err) {
    db.close();
    throw err;
  }
}

/**
 * SQLite's message, with what the file system says when it is about writing: SQLite reports a
 * read-only file system as "attempt to write a readonly database" or "unable to open database file".
 */
export function explain(err: unknown, path: string): string {
  const message = (err as Error).message;
  if (!EXPLAINED.has(sqliteCode(err) ?? -1)) return message;
  for (const target of [path, dirname(path)]) {
    try {
      accessSync(target, constants.W_OK);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') continue;
      const why =
        code === 'EROFS'
          ? 'is on a read-only file system'
          : code === 'EACCES' || code === 'EPERM'
            ? 'cannot be written by this user'
            : `cannot be written (${code})`;
      return `${message} (${target} ${why})`;
    }
  }
  if (!existsSync(dirname(path))) return `${message} (the directory ${dirname(path)} does not exist)`;
  return message;
}

const WAL_HEADER = 32;
const WAL_FRAME_HEADER = 24;

/**
 * What SQLite will not say: a write-ahead log left by a run that did not close the store (a crash)
 * is replayed at open, but one cut short (a full disk, a partial copy or restore) silently loses
 * what was committed after the cut. Undefined for a log that is whole, or none.
 */
export function walCutShort(path: string, say: Say): string | undefined {
  const wal = `${path}-wal`;
  let size: number;
  try {
    size = statSync(wal).size;
  } catch {
    return undefined;
  }
  if (size === 0) return undefined;
  if (size < WAL_HEADER) return say('runtime.log.store.walShort', { wal, size });
  const header = Buffer.alloc(WAL_HEADER);
  const fd = openSync(wal, 'r');
  try {
    readSync(fd, header, 0, WAL_HEADER, 0);
  } finally {
    closeSync(fd);
  }
  const magic = header.readUInt32BE(0);
  if (magic !== 0x377f0682 && magic !== 0x377f0683) return say('runtime.log.store.walDamaged', { wal });
  const frame = WAL_FRAME_HEADER + header.readUInt32BE(8);
  const partial = (size - WAL_HEADER) % frame;
  if (!partial) return undefined;
  return say('runtime.log.store.walPartial', { wal, partial, frame });
}
