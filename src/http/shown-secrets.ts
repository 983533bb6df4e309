/**
 * How tokens and other systems' URLs show in our log lines and error texts. An Environment token
 * in a webhook path is a credential (whoever has it can post to the Environment's routes), and
 * another system's URL may carry its own in its path or query.
 */

/** A token as logs show it: its first four characters tell Environments apart; a short token shows none. */
export function shownToken(token: string): string {
  return token.length >= 16 ? `${token.slice(0, 4)}…` : '…';
}

/**
 * `text` with `token` in it (as written, and as a URL carries it) shown as `shownToken`: for what a
 * provider says back, which may quote a webhook URL we gave it.
 */
export function hideToken(text: string, token: string | undefined): string {
  if (!token) return text;
  let hidden = text;
  for (const form of new Set([token, encodeURIComponent(token)])) hidden = hidden.split(form).join(shownToken(token));
  return hidden;
}

/**
 * A URL of one of our token routes with the path segment after `/<segment>/` shown as `shownToken`.
 * Case-insensitive, as Express matches routes: `/INBOUND/<token>` reaches the route too.
 */
export function hidePathToken(url: string, segment: string): string {
  return url.replace(new RegExp(`(/${segment}/)([^/?#]*)`, 'i'), (_, at: string, token: string) => at + shownToken(token));
}

/** Another system's URL as logs show it: its origin only, since its path or query may carry its credentials. */
export function originForLog(url: string): string {
  try {
    const { protocol, host } = new URL(url);
    return `${protocol}//${host}`;
  } catch {
    return 'an unreadable URL';
  }
}
