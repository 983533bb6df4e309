import { TaskError } from '../model/errors';

/**
 * Whether an Environment's `apiUrl` (GovSlack, a proxy, an emulator) can carry its provider calls:
 * empty (the provider's own hosts) or an http(s) URL with a host. The editor checks the field, but
 * a flow imported or deployed through the admin API is not checked there, and a call through such
 * a value fails in words that blame the provider ("Invalid URL", `Protocol "localhost:" not
 * supported`) or, for the token's allowed origins, adds nothing without a word.
 */
export function isUsableApiUrl(apiUrl: string): boolean {
  if (!apiUrl) return true;
  let url: URL;
  try {
    url = new URL(apiUrl);
  } catch {
    return false;
  }
  return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
}

/** The 4008 a provider call stops with when the `apiUrl` is unusable; `environment` names it ("voice Environment "x""). */
export function apiUrlError(apiUrl: string, environment: string): TaskError | undefined {
  if (isUsableApiUrl(apiUrl)) return undefined;
  return new TaskError(
    4008,
    `The API URL "${apiUrl}" of the ${environment} is not a URL with http:// or https:// and a host; correct it, or leave it empty for the provider's own API`,
  );
}
