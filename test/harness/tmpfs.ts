import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A small tmpfs of its own, to cause the disk faults a store meets in production: full, read-only.
 * Mounting needs root (the tests run as root here and in CI); `mount` says why it was refused
 * otherwise, and the suite is skipped with that reason.
 */
export class Tmpfs {
  private readonly filler: string;

  private constructor(readonly dir: string) {
    this.filler = join(dir, 'filler');
  }

  /** The mounted tmpfs, or why it could not be mounted. */
  static mount(sizeBytes: number): Tmpfs | string {
    const dir = mkdtempSync(join(tmpdir(), 'cs-tmpfs-'));
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeBytes},mode=0755`, 'tmpfs', dir], { stdio: 'pipe' });
      return new Tmpfs(dir);
    } catch (err) {
      rmSync(dir, { recursive: true, force: true });
      const stderr = String((err as { stderr?: Buffer }).stderr ?? '').trim();
      return `mount -t tmpfs refused (${(stderr || (err as Error).message).replace(/\s+/g, ' ')}); these tests need root`;
    }
  }

  /** Writes one file until the file system has no block left (ENOSPC). */
  fill(): void {
    const fd = openSync(this.filler, 'a');
    try {
      for (const size of [1 << 20, 1 << 16, 1 << 12, 512]) {
        const chunk = Buffer.alloc(size, 0x5a);
        for (;;) {
          try {
            if (writeSync(fd, chunk) < size) break;
          } catch (err) {
            if ((err as NodeJS.ErrnoException).code === 'ENOSPC') break;
            throw err;
          }
        }
      }
    } finally {
      closeSync(fd);
    }
  }

  /** Removes what `fill` wrote. */
  free(): void {
    rmSync(this.filler, { force: true });
  }

  /** `mount -o remount,ro`: Linux refuses it (EBUSY) while a file on it is open for writing. */
  readOnly(): void {
    execFileSync('mount', ['-o', 'remount,ro', this.dir], { stdio: 'pipe' });
  }

  readWrite(): void {
    execFileSync('mount', ['-o', 'remount,rw', this.dir], { stdio: 'pipe' });
  }

  unmount(): void {
    try {
      execFileSync('umount', [this.dir], { stdio: 'pipe' });
    } catch {
      // Still open by a process that has not exited yet: detach it now, freed when it closes.
      execFileSync('umount', ['-l', this.dir], { stdio: 'pipe' });
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}
