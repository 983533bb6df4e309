import type { IncomingFile } from '../engine/files/intake';
import { typeFromName } from '../engine/files/mime';
import { INBOUND_FILES } from '../engine/limits';
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

/** Downloads with the bot token, following redirects only within the allowed origins. */
export async function downloadSlackFile(url: string, botToken: string, allowedOrigins: string[]): Promise<Buffer> {
  let current = url;
  for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
    if (!allowedOrigin(current, allowedOrigins)) throw new Error(`refused to send the bot token to ${originOf(current)}`);
    const res = await fetch(current, { headers: { Authorization: `Bearer ${botToken}` }, redirect: 'manual' });
    if (res.status >= 300 && res.status < 400 && res.headers.get('location')) {
      current = new URL(res.headers.get('location') as string, current).toString();
      await res.body?.cancel();
      continue;
    }
    if (res.status !== 200) {
      await res.body?.cancel();
      throw new Error(`HTTP ${res.status}`);
    }
    // A missing files:read scope or a bad token gets Slack's login page instead of the file.
    if ((res.headers.get('content-type') ?? '').startsWith('text/html')) {
      await res.body?.cancel();
      throw new Error('Slack sent a web page instead of the file (is files:read granted?)');
    }
    const declared = Number(res.headers.get('content-length') ?? '0');
    if (declared > INBOUND_FILES.maxBytes) {
      await res.body?.cancel();
      throw new Error(`larger than ${INBOUND_FILES.maxBytes / 1048576} MB`);
    }
    return Buffer.from(await res.arrayBuffer());
  }
  throw new Error('too many redirects');
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
