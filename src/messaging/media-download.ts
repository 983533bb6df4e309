import { download, type DownloadHop } from '../files/download';
import { extensionFromType } from '../files/mime';
import type { IncomingFile } from '../files/intake';
import { originForLog } from '../http/shown-secrets';
import { INBOUND_FILES } from '../model/limits';
import { accountCredentials } from './provider-client';
import type { MessagingEnvironment } from './environment';

const PROVIDER_ORIGIN = 'https://api.twilio.com';
const MAX_REDIRECTS = 5;

/**
 * Whether a media URL is the provider's own media address for this account: the account's
 * `/2010-04-01/Accounts/<AccountSid>/Messages/<sid>/Media/<sid>` on api.twilio.com, or the same
 * path under the `apiUrl` base. Only such URLs ever get the account's credentials.
 */
export function isAccountMediaUrl(url: string, accountSid: string, apiUrl: string): boolean {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return false;
  }
  if (target.username || target.password) return false;
  const mediaPath = new RegExp(`^/2010-04-01/Accounts/${accountSid}/Messages/[A-Za-z0-9]+/Media/[A-Za-z0-9]+$`);
  const bases = [PROVIDER_ORIGIN];
  if (apiUrl) {
    try {
      const base = new URL(apiUrl);
      bases.push(base.origin + base.pathname.replace(/\/+$/, ''));
    } catch {
      // an unusable apiUrl adds nothing
    }
  }
  return bases.some((base) => {
    const origin = new URL(base).origin;
    const prefix = base.slice(origin.length);
    return target.origin === origin && target.pathname.startsWith(prefix + '/') && mediaPath.test(target.pathname.slice(prefix.length));
  });
}

/** A message's media as files for the engine: `file-1.jpg` by position and type. */
export function incomingMedia(env: MessagingEnvironment, media: Array<{ url: string; type: string }>): IncomingFile[] {
  let credentials: { accountSid: string; authToken: string } | undefined;
  let missing = '';
  try {
    credentials = accountCredentials(env);
  } catch (err) {
    missing = (err as Error).message;
  }
  return media.map((item, index) => {
    const name = `file-${index + 1}.${extensionFromType(item.type)}`;
    const type = item.type.split(';')[0].trim();
    if (!credentials) return { name, type, skipReason: `cannot download: ${missing}`, fetch: refuse };
    if (!isAccountMediaUrl(item.url, credentials.accountSid, env.config.apiUrl)) {
      return { name, type, skipReason: `its media URL is not the provider's media address for this account (${originForLog(item.url)})`, fetch: refuse };
    }
    const { accountSid, authToken } = credentials;
    return { name, type, fetch: () => downloadMedia(item.url, accountSid, authToken) };
  });
}

async function refuse(): Promise<Buffer> {
  throw new Error('not downloadable');
}

/**
 * Downloads with basic auth on the provider's address only. The provider answers with a redirect
 * to a short-lived CDN URL: redirects are followed by hand and never carry the Authorization
 * header. Failures are retried as engine/files/download.ts says; `attemptTimeoutMs` is for tests.
 */
export function downloadMedia(url: string, accountSid: string, authToken: string, attemptTimeoutMs?: number): Promise<Buffer> {
  const authorization = 'Basic ' + Buffer.from(`${accountSid}:${authToken}`).toString('base64');
  return download(url, {
    hop: (target, index): DownloadHop =>
      index === 0 ? { headers: { authorization }, host: "Twilio's media host" } : { headers: {}, host: `the media CDN (${target.host})` },
    maxRedirects: MAX_REDIRECTS,
    maxBytes: INBOUND_FILES.maxBytes,
    ...(attemptTimeoutMs ? { attemptTimeoutMs } : {}),
  });
}
