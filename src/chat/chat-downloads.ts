import { randomBytes } from 'node:crypto';
import { contentDisposition } from '../http/content-disposition';
import type { RED } from '../model/red';

/** What the Test chat keeps of the files a Process sends, so the transcript can offer them for download. */
export const DOWNLOAD_LIMITS = { maxFiles: 200, maxBytes: 32 * 1024 * 1024 };

interface Kept {
  name: string;
  type: string;
  data: Buffer;
}

/**
 * Files a test Session's Tasks sent, by a random id, bounded in count and bytes: the oldest go
 * first. A Session's own files are freed when it ends, so the bytes are copied here as they are
 * sent. Nothing of this reaches the Session record but the ids.
 */
export class ChatDownloads {
  private readonly kept = new Map<string, Kept>();
  private bytes = 0;

  constructor(private readonly limits = DOWNLOAD_LIMITS) {}

  /** Keeps a file and answers its id, or undefined when it alone is over the byte limit. */
  keep(file: Kept): string | undefined {
    if (file.data.length > this.limits.maxBytes) return undefined;
    const id = randomBytes(16).toString('base64url');
    this.kept.set(id, file);
    this.bytes += file.data.length;
    for (const [oldest, f] of this.kept) {
      if (this.kept.size <= this.limits.maxFiles && this.bytes <= this.limits.maxBytes) break;
      this.kept.delete(oldest);
      this.bytes -= f.data.length;
    }
    return id;
  }

  get(id: string): Kept | undefined {
    return this.kept.get(id);
  }

  get size(): { files: number; bytes: number } {
    return { files: this.kept.size, bytes: this.bytes };
  }
}

/** `GET /channel-sessions/test-files/:id`: a kept file as a download (the editor's read permission). */
export function registerChatDownloads(red: RED, downloads: ChatDownloads): void {
  red.httpAdmin.get('/channel-sessions/test-files/:id', red.auth.needsPermission('channel-sessions.read'), (req, res) => {
    const file = downloads.get(req.params.id);
    if (!file) {
      res.status(404).json({ error: 'No such file: the Test chat keeps the latest files only' });
      return;
    }
    res.set('Content-Disposition', contentDisposition(file.name));
    res.set('Cache-Control', 'no-store');
    res.type(file.type || 'application/octet-stream').send(file.data);
  });
}
