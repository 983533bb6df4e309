import { normalisedRoot, publicRouteUrl } from '../http/public-url';
import type { VoiceEnvironment } from './environment';

export const START_ROUTE = '/api/TelcoModule/Voice/start/:token';
export const NEXT_ROUTE = '/api/TelcoModule/Voice/next/:environmentId';
export const STATUS_ROUTE = '/api/TelcoModule/Voice/status/:environmentId';

/** Query marker of a Redirect the engine answered while the flow was still running. */
export const PENDING_MARKER = 'pending';

export function startPath(token: string): string {
  return `/api/TelcoModule/Voice/start/${encodeURIComponent(token)}`;
}

export function nextPath(environmentId: string): string {
  return `/api/TelcoModule/Voice/next/${encodeURIComponent(environmentId)}`;
}

/** Where the provider posts the status of a call a Call out node placed. */
export function statusPath(environmentId: string): string {
  return `/api/TelcoModule/Voice/status/${encodeURIComponent(environmentId)}`;
}

/**
 * A URL to put in TwiML or register with the provider: absolute with the public base URL, else
 * the path under the httpNode root, which the provider resolves against the URL it just called.
 */
export function routeUrl(env: Pick<VoiceEnvironment, 'publicBaseUrl'>, httpNodeRoot: string | undefined, path: string): string {
  return publicRouteUrl(env.publicBaseUrl, httpNodeRoot, path) ?? rootedPath(httpNodeRoot, path);
}

export function rootedPath(httpNodeRoot: string | undefined, path: string): string {
  const root = normalisedRoot(httpNodeRoot);
  return root === '/' ? path : root + path;
}

export function nextUrl(env: VoiceEnvironment, httpNodeRoot: string | undefined): string {
  return routeUrl(env, httpNodeRoot, nextPath(env.id));
}

export function pendingUrl(env: VoiceEnvironment, httpNodeRoot: string | undefined): string {
  return `${nextUrl(env, httpNodeRoot)}?${PENDING_MARKER}=1`;
}
