import { extensionFromType } from '../engine/files/mime';
import type { IncomingFile } from '../engine/files/intake';
import { INBOUND_FILES } from '../engine/limits';
import { accountCredentials } from './provider-client';
import type { MessagingEnvironment } from './environment';

const PROVIDER_ORIGIN = 'https://api.twilio.com';
const MAX_REDIRECTS = 5;
const DOWNLOAD_TIMEOUT_MS = 30000;

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
      return { name, type, skipReason: `its media URL is not the provider's media address for this account (${safeForLog(item.url)})`, fetch: refuse };
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
 * to a short-lived CDN URL: redirects are followed by hand and never carry the Authorization header.
 */
export async function downloadMedia(url: string, accountSid: string, authToken: string): Promise<Buffer> {
  const signal = AbortSignal.timeout(DOWNLOAD_TIMEOUT_MS);
  const authorization = 'Basic ' + Buffer.from(`${accountSid}:${authToken}`).toString('base64');
  let current = url;
  let headers: Record<string, string> = { authorization };
  for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
    const res = await fetchOnceMore(current, { headers, redirect: 'manual', signal });
    if (res.status >= 300 && res.status < 400) {
      const location = res.headers.get('location');
      await res.body?.cancel();
      if (!location) throw new Error(`HTTP ${res.status} without a Location`);
      current = new URL(location, current).toString();
      headers = {};
      continue;
    }
    if (!res.ok) {
      await res.body?.cancel();
      throw new Error(`HTTP ${res.status}`);
    }
    return readCapped(res, INBOUND_FILES.maxBytes);
  }
  throw new Error(`more than ${MAX_REDIRECTS} redirects`);
}

/**
 * A kept-alive connection the server has just closed fails the request before anything is sent
 * (`fetch failed`); one more try on a fresh connection is safe for these GETs.
 */
async function fetchOnceMore(url: string, init: RequestInit): Promise<Response> {
  try {
    return await fetch(url, init);
  } catch (err) {
    if (init.signal?.aborted || !(err instanceof TypeError)) throw err;
    return fetch(url, init);
  }
}

/** Reads a body but stops past the inbound limit, so a huge file never fills memory. */
async function readCapped(res: Response, limit: number): Promise<Buffer> {
  const declared = Number(res.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > limit) {
    await res.body?.cancel();
    throw new Error(`${declared} bytes, over the ${limit / 1048576} MB limit per message`);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  if (!res.body) return Buffer.alloc(0);
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    size += chunk.length;
    if (size > limit) throw new Error(`over the ${limit / 1048576} MB limit per message`);
    chunks.push(Buffer.from(chunk));
  }
  return Buffer.concat(chunks);
}

/** A foreign URL is shown in the log without its query (it may carry someone's token). */
function safeForLog(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return 'an unreadable URL';
  }
}
