import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { mkdir, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { packageDir } from '../files/package-dir';

/** What the media route finds behind a link. */
export type LinkLookup = { status: 200; path: string; name: string; type: string; size: number } | { status: 403 | 404 | 410; reason: string };

interface LinkMeta {
  name: string;
  type: string;
  expires: number;
}

const SWEEP_EVERY_MS = 3600 * 1000;

/**
 * Signed, expiring links to outbound files. The provider fetches messenger media from them and SMS
 * users open them, possibly days after the Session ended, so each file is copied into a media
 * folder under the user dir (the Session's own files are freed when it ends). A link is
 * `<id>.<expiry>.<HMAC>` with a secret made once per install and kept beside the files.
 */
export class MediaLinks {
  private readonly dir: string;
  private secret: Promise<Buffer> | undefined;
  private lastSweep = 0;

  /** `fileDirectory`: channelSessions.fileDirectory, shared by several instances (package-dir.ts). */
  constructor(userDir: string, fileDirectory?: unknown) {
    this.dir = join(packageDir(userDir, fileDirectory), 'messaging-media');
  }

  /** Keeps a copy of the file and returns the link token, valid for `ttlSeconds`. */
  async create(file: { name: string; type: string; read(): Promise<Buffer> }, ttlSeconds: number, now = Date.now()): Promise<string> {
    const secret = await this.key();
    void this.sweep(now);
    const id = randomBytes(16).toString('hex');
    const expires = Math.floor(now / 1000) + ttlSeconds;
    const data = await file.read();
    await writeFile(join(this.dir, `${id}.bin`), data);
    const meta: LinkMeta = { name: file.name, type: file.type, expires };
    await writeFile(join(this.dir, `${id}.json`), JSON.stringify(meta));
    return `${id}.${expires}.${sign(secret, `${id}.${expires}`)}`;
  }

  async lookup(link: string, now = Date.now()): Promise<LinkLookup> {
    const match = /^([0-9a-f]{32})\.(\d{1,12})\.([A-Za-z0-9_-]{43})$/.exec(link);
    if (!match) return { status: 403, reason: 'not a media link' };
    const [, id, expiry, signature] = match;
    const expected = Buffer.from(sign(await this.key(), `${id}.${expiry}`));
    const given = Buffer.from(signature);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { status: 403, reason: 'bad signature' };
    if (Number(expiry) * 1000 < now) return { status: 410, reason: 'link expired' };
    try {
      const meta = JSON.parse(await readFile(join(this.dir, `${id}.json`), 'utf8')) as LinkMeta;
      const path = join(this.dir, `${id}.bin`);
      const info = await stat(path);
      return { status: 200, path, name: meta.name, type: meta.type, size: info.size };
    } catch {
      return { status: 410, reason: 'the file is no longer kept' };
    }
  }

  private key(): Promise<Buffer> {
    this.secret ??= this.loadKey();
    return this.secret;
  }

  private async loadKey(): Promise<Buffer> {
    await mkdir(this.dir, { recursive: true });
    const path = join(this.dir, '.link-secret');
    try {
      const kept = Buffer.from((await readFile(path, 'utf8')).trim(), 'base64');
      if (kept.length >= 32) return kept;
    } catch {
      // first use on this install
    }
    const fresh = randomBytes(32);
    await writeFile(path, fresh.toString('base64'), { mode: 0o600 });
    return fresh;
  }

  /** Expired copies are removed now and then, when links are made. */
  private async sweep(now: number): Promise<void> {
    if (now - this.lastSweep < SWEEP_EVERY_MS) return;
    this.lastSweep = now;
    try {
      for (const entry of await readdir(this.dir)) {
        if (!entry.endsWith('.json')) continue;
        const id = entry.slice(0, -5);
        try {
          const meta = JSON.parse(await readFile(join(this.dir, entry), 'utf8')) as LinkMeta;
          if (meta.expires * 1000 >= now) continue;
        } catch {
          // unreadable meta: remove the pair
        }
        await rm(join(this.dir, `${id}.bin`), { force: true });
        await rm(join(this.dir, entry), { force: true });
      }
    } catch {
      // a failed sweep is retried at the next one
    }
  }
}

function sign(secret: Buffer, data: string): string {
  return createHmac('sha256', secret).update(data).digest('base64url');
}
