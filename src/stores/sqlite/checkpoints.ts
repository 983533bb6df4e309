import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
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
 * The checkpointer's code: a connection of its own to the file, opened for each checkpoint (the
 * store may have set its file aside and started a new one since) as a URI with mode=rw, so that it
 * never creates a file where the store has just moved a damaged one aside; a passive checkpoint;
 * closed. Answers when done, so the store never asks for two at once.
 */
const CHECKPOINTER = `
const { parentPort } = require('node:worker_threads');
const { DatabaseSync } = require('node:sqlite');
parentPort.on('message', (uri) => {
  let db;
  try {
    db = new DatabaseSync(uri, { timeout: 1000 });
    db.exec('PRAGMA wal_checkpoint(PASSIVE)');
  } catch {
    // busy or gone for a moment: the next checkpoint (or SQLite's own) folds it in
  } finally {
    try { db && db.close(); } catch {}
  }
  parentPort.postMessage('done');
});
`;

/**
 * When the write-ahead log is folded into the database file. SQLite's default (every 1,000 pages,
 * inside the commit that crosses the mark) checkpoints many times a second under load, each time
 * copying the same busy pages again (the ends of the inbound, timer and activity indexes) and
 * waiting for the disk twice, on the thread that runs the flows; and when messages come only now
 * and then it can leave the log unsynced for hours. Here a passive checkpoint runs at most a
 * second after the first write since the last one, on a worker thread with a connection of its
 * own: under load each busy page is copied once a second, off the event loop, and with
 * synchronous=NORMAL a power loss costs at most about the last second of steps. Passive: it never
 * waits for, nor holds up, a reader or writer on another connection. Where a worker cannot be
 * started, the store's own connection checkpoints on the timer instead.
 */
export class CheckpointTimer {
  private timer: NodeJS.Timeout | undefined;
  private worker: Worker | undefined;
  private workerFailed = false;
  /** A checkpoint is running on the worker; a write meanwhile asks for the next one when it ends. */
  private running = false;
  private wanted = false;
  private stopped = false;

  /** `db` is asked for at the time of the checkpoint: the store may have opened its file again since. */
  constructor(
    private readonly path: string,
    private readonly db: () => DatabaseSync | undefined,
  ) {}

  /** A write was committed: a checkpoint is due within CHECKPOINT_AFTER_MS. */
  wrote(): void {
    if (this.stopped) return;
    if (this.running) {
      this.wanted = true;
      return;
    }
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.now();
    }, CHECKPOINT_AFTER_MS);
    this.timer.unref();
  }

  /** A checkpoint now: on the worker, or on the store's connection when there is none. */
  now(): void {
    const worker = this.checkpointer();
    if (!worker) {
      this.onStoreConnection();
      return;
    }
    this.running = true;
    worker.postMessage(`${pathToFileURL(this.path).href}?mode=rw`);
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    void this.worker?.terminate();
    this.worker = undefined;
  }

  private checkpointer(): Worker | undefined {
    if (this.worker || this.workerFailed) return this.worker;
    try {
      const worker = new Worker(CHECKPOINTER, { eval: true });
      // Never what keeps Node-RED running: at exit the store's connection folds the log in itself.
      worker.unref();
      worker.on('message', () => this.ended());
      worker.on('error', () => this.lost(worker));
      worker.on('exit', () => this.lost(worker));
      this.worker = worker;
    } catch {
      this.workerFailed = true;
    }
    return this.worker;
  }

  private ended(): void {
    this.running = false;
    if (this.wanted) {
      this.wanted = false;
      this.wrote();
    }
  }

  /** A worker that failed or ended is not started again: the store's connection checkpoints from then on. */
  private lost(worker: Worker): void {
    if (this.worker !== worker) return;
    this.worker = undefined;
    this.workerFailed = true;
    this.ended();
  }

  /** A failed checkpoint is left to the next one (or SQLite's own): the steps it would fold are committed already. */
  private onStoreConnection(): void {
    try {
      this.db()?.exec('PRAGMA wal_checkpoint(PASSIVE)');
    } catch {
      // the file is busy or gone for a moment; nothing is lost by waiting
    }
  }
}

/** The log settings for a connection the store writes through. */
export function logPragmas(db: DatabaseSync): void {
  db.exec(`PRAGMA wal_autocheckpoint = ${AUTOCHECKPOINT_PAGES}`);
  db.exec(`PRAGMA journal_size_limit = ${LOG_SIZE_LIMIT_BYTES}`);
}
