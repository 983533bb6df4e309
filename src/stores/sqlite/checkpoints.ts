import type { DatabaseSync } from './sqlite';

/** How long after a write the write-ahead log is folded into the database file, at the latest. */
export const CHECKPOINT_AFTER_MS = 1000;
/**
 * SQLite's own checkpoint, run by the commit that makes the log this long (in pages), stays as the
 * log's bound should the timer fall behind (a stalled event loop): 10,000 pages is 40 MB of log.
 */
export const AUTOCHECKPOINT_PAGES = 10_000;
/** After a checkpoint, a log file larger than this is cut back to it. */
export const LOG_SIZE_LIMIT_BYTES = 64 * 1024 * 1024;

/**
 * When the write-ahead log is folded into the database file. SQLite's default (every 1,000 pages,
 * inside the commit that crosses the mark) checkpoints many times a second under load, each time
 * copying the same busy pages again (the ends of the inbound, timer and activity indexes) and
 * waiting for the disk twice; and when messages come only now and then it can leave the log
 * unsynced for hours. Here a passive checkpoint runs at most a second after the first write since
 * the last one: under load each busy page is copied once a second, and with synchronous=NORMAL a
 * power loss costs at most about the last second of steps. Passive: it never waits for, nor holds
 * up, a reader or writer on another connection to the file (the sqlite-context store's).
 */
export class CheckpointTimer {
  private timer: NodeJS.Timeout | undefined;

  /** `db` is asked for at the time of the checkpoint: the store may have opened its file again since. */
  constructor(private readonly db: () => DatabaseSync | undefined) {}

  /** A write was committed: a checkpoint is due within CHECKPOINT_AFTER_MS. */
  wrote(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.now();
    }, CHECKPOINT_AFTER_MS);
    this.timer.unref();
  }

  /** A failed checkpoint is left to the next one (or SQLite's own): the steps it would fold are committed already. */
  now(): void {
    try {
      this.db()?.exec('PRAGMA wal_checkpoint(PASSIVE)');
    } catch {
      // the file is busy or gone for a moment; nothing is lost by waiting
    }
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}

/** The log settings for a connection the store writes through. */
export function logPragmas(db: DatabaseSync): void {
  db.exec(`PRAGMA wal_autocheckpoint = ${AUTOCHECKPOINT_PAGES}`);
  db.exec(`PRAGMA journal_size_limit = ${LOG_SIZE_LIMIT_BYTES}`);
}
