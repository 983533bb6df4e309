import { normalisedRoot, publicRouteUrl } from '../http/public-url';
import type { VoiceEnvironment } from './environment';

export const START_ROUTE = '/api/TelcoModule/Voice/start/:token';
export const NEXT_ROUTE = '/api/TelcoModule/Voice/next/:environmentId';
/** The ConversationRelay WebSocket of an AI agent Task; not an express route (an HTTP upgrade). */
export const RELAY_PREFIX = '/api/TelcoModule/Voice/relay/';

export const STATUS_ROUTE = '/api/TelcoModule/Voice/status/:environmentId';

/** Query marker of a Redirect the engine answered while the flow was still running. */
export const PENDING_MARKER = 'pending';

/** Query marker of the Redirect after a Record, which the provider follows only when the recording was empty. */
export const NO_RECORDING_MARKER = 'noRecording';

/** Query field of the URLs a Call out node gives the provider: the seq of the request placing the call. */
export const CALL_OUT_MARKER = 'callOut';

export function startPath(token: string): string {
  return `/api/TelcoModule/Voice/start/${encodeURIComponent(token)}`;
}

export function nextPath(environmentId: string): string {
  return `/api/TelcoModule/Voice/next/${encodeURIComponent(environmentId)}`;
}

/** A URL of a route given with a call a Call out request (`requestSeq`) places, naming that request. */
export function callOutUrl(env: Pick<VoiceEnvironment, 'publicBaseUrl'>, httpNodeRoot: string | undefined, path: string, requestSeq: number): string {
  return `${routeUrl(env, httpNodeRoot, path)}?${CALL_OUT_MARKER}=${requestSeq}`;
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

export function noRecordingUrl(env: VoiceEnvironment, httpNodeRoot: string | undefined): string {
  return `${nextUrl(env, httpNodeRoot)}?${NO_RECORDING_MARKER}=1`;
}

export function relayPath(environmentId: string): string {
  return `${RELAY_PREFIX}${encodeURIComponent(environmentId)}`;
}

/**
 * The relay WebSocket URL for one waiting AI agent Task: the call and a relay id in the query let
 * the socket find its Session (on any instance, after a restart too). With a public base URL it is
 * `wss://` on it; without one it stays a path, made absolute from the webhook's own URL when the
 * TwiML is answered (the provider needs an absolute `wss://` URL).
 */
export function relayUrl(env: VoiceEnvironment, httpNodeRoot: string | undefined, callSid: string, relayId: string): string {
  const path = `${relayPath(env.id)}?call=${encodeURIComponent(callSid)}&relay=${encodeURIComponent(relayId)}`;
  return toWebSocketScheme(routeUrl(env, httpNodeRoot, path));
}

/** http(s) to ws(s); a path stays as it is. */
export function toWebSocketScheme(url: string): string {
  return url.replace(/^http(s?):\/\//i, 'ws$1://');
}

/**
 * Makes relative relay URLs in an answer absolute with the origin the provider called (a
 * deployment without a public base URL). The attribute is always the first of the noun (verbs.ts).
 */
export function withRelayOrigin(twiml: string, calledUrl: string): string {
  if (!twiml.includes('<ConversationRelay url="/')) return twiml;
  const origin = toWebSocketScheme(new URL(calledUrl).origin);
  return twiml.replace(/<ConversationRelay url="\//g, `<ConversationRelay url="${origin}/`);
}
