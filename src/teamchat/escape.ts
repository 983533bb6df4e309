/**
 * Slack's formatting rules: only `&`, `<` and `>` are control characters. Escaping them in a
 * substituted value makes `<!channel>`, `<@U…>` or `<https://x|label>` typed by a user literal
 * text instead of a ping or a disguised link; the Task author's own markup stays untouched.
 */
export function escapeSlackText(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** Inbound text arrives escaped; variables hold what the person typed. */
export function unescapeSlackText(text: string): string {
  return text.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}

/** The text without the mentions of the app (`<@U123>` or `<@U123|name>`); the rest is kept as typed. */
export function withoutMention(text: string, botUserId: string | undefined, leadingOnly: boolean): string {
  if (botUserId) {
    const id = botUserId.replace(/[^A-Za-z0-9]/g, '');
    text = text.replace(new RegExp(`[ \\t]*<@${id}(?:\\|[^>]*)?>`, 'g'), '');
  } else if (leadingOnly) {
    // An app_mention with no known bot user id: the mention that triggered it leads the text.
    text = text.replace(/^\s*<@[A-Z0-9]+(?:\|[^>]*)?>/, '');
  }
  return text.trim();
}
