/**
 * The part of Node's built-in `node:sqlite` (Node >= 22.13) the store uses. Loaded at run time so
 * that an older Node gets a clear message instead of a crash, and typed here because the package
 * builds against @types/node 20.
 */
export interface StatementSync {
  run(...params: unknown[]): { changes: number | bigint; lastInsertRowid: number | bigint };
  get(...params: unknown[]): Record<string, unknown> | undefined;
  all(...params: unknown[]): Array<Record<string, unknown>>;
}

export interface DatabaseSync {
  exec(sql: string): void;
  prepare(sql: string): StatementSync;
  close(): void;
}

export type DatabaseConstructor = new (path: string, options?: { timeout?: number }) => DatabaseSync;

/** The DatabaseSync class, or the reason it is missing on this Node. */
export function loadSqlite(): DatabaseConstructor | string {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const sqlite = require('node:sqlite') as { DatabaseSync: DatabaseConstructor };
    return sqlite.DatabaseSync;
  } catch {
    return `Node.js ${process.version} has no built-in SQLite (node:sqlite needs Node 22.13 or later)`;
  }
}

/** Work on a connection of its own at open (a schema change and what fills it), all or nothing. */
export function inTransaction(db: DatabaseSync, work: () => void): void {
  db.exec('BEGIN IMMEDIATE');
  try {
    work();
    db.exec('COMMIT');
  } catch (err) {
    db.exec('ROLLBACK');
    throw err;
  }
}

/** SQLite's primary result code of an error thrown by node:sqlite (SQLITE_FULL is 13, and so on). */
export function sqliteCode(err: unknown): number | undefined {
  const code = (err as { errcode?: unknown })?.errcode;
  return typeof code === 'number' ? code & 0xff : undefined;
}

export const SQLITE_READONLY = 8;
export const SQLITE_IOERR = 10;
export const SQLITE_CORRUPT = 11;
export const SQLITE_CANTOPEN = 14;
export const SQLITE_NOTADB = 26;
