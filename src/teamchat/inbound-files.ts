import { download, DownloadFailed } from '../files/download';
import type { IncomingFile } from '../files/intake';
import { typeFromName } from '../files/mime';
import { INBOUND_FILES } from '../model/limits';
import type { SlackFile } from './message-event';

const MAX_REDIRECTS = 3;

/**
 * A message's files as the engine downloads them. The bot token goes only to Slack's own file
 * hosts (or the configured `apiUrl` origin); a file anywhere else, deleted, hidden by the plan or
 * shared from another organization is skipped with its reason (4022 in the Session log).
 */
export function incomingFiles(files: SlackFile[], botToken: string, allowedOrigins: string[]): IncomingFile[] {
  return files.map((file, i) => {
    const name = file.name || file.title || `file-${i + 1}`;
    const url = file.url_private_download || file.url_private;
    const skipReason = botToken ? whySkipped(file, url, allowedOrigins) : 'the Environment has no Bot Token to download it with';
    return {
      name,
      type: file.mimetype || typeFromName(name),
      ...(typeof file.size === 'number' ? { size: file.size } : {}),
      ...(skipReason ? { skipReason } : {}),
      fetch: () => downloadSlackFile(url ?? '', botToken, allowedOrigins),
    };
  });
}

function whySkipped(file: SlackFile, url: string | undefined, allowedOrigins: string[]): string | undefined {
  if (file.file_access && file.file_access !== 'visible') return 'shared from another organization or not accessible';
  if (file.mode === 'tombstone') return 'the file was deleted';
  if (file.mode === 'hidden_by_limit') return "hidden by the workspace's plan";
  if (file.is_external || file.mode === 'external') return 'stored outside Slack';
  if (!url) return 'no download link';
  if (!allowedOrigin(url, allowedOrigins)) return `not on a Slack file host (${originOf(url)}); the bot token is only sent to Slack`;
  return undefined;
}

/**
 * Downloads with the bot token, following redirects only within the allowed origins (a redirect
 * elsewhere fails at once, never tried again). Failures are retried as engine/files/download.ts
 * says; `attemptTimeoutMs` is for tests.
 */
export function downloadSlackFile(url: string, botToken: string, allowedOrigins: string[], attemptTimeoutMs?: number): Promise<Buffer> {
  return download(url, {
    hop: (target) => {
      if (!allowedOrigins.includes(target.origin)) throw new DownloadFailed(`refused to send the bot token to ${target.origin}`);
      return { headers: { authorization: `Bearer ${botToken}` }, host: "Slack's file host" };
    },
    maxRedirects: MAX_REDIRECTS,
    maxBytes: INBOUND_FILES.maxBytes,
    // A missing files:read scope or a bad token gets Slack's login page instead of the file.
    notTheFile: (headers) =>
      String(headers['content-type'] ?? '').startsWith('text/html') ? 'Slack sent a web page instead of the file (is files:read granted?)' : undefined,
    ...(attemptTimeoutMs ? { attemptTimeoutMs } : {}),
  });
}

function allowedOrigin(url: string, allowed: string[]): boolean {
  return allowed.includes(originOf(url));
}

function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return 'an invalid URL';
  }
}
