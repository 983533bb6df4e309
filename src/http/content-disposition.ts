/**
 * A Content-Disposition header naming a file, as browsers read it (RFC 6266): the name as is when
 * it is plain ASCII, else an ASCII stand-in (`?` for each other character) with the exact name in
 * `filename*` (RFC 8187, UTF-8). A name with a `%xx` in it gets `filename*` too, as some browsers
 * would decode the plain one. Our own few lines instead of a dependency: only this is needed.
 */
export function contentDisposition(name: string, type: 'attachment' | 'inline' = 'attachment'): string {
  const ascii = /^[\x20-\x7e]*$/.test(name) && !/%[0-9A-Fa-f]{2}/.test(name);
  const plain = `${type}; filename=${quoted(ascii ? name : name.replace(/[^\x20-\x7e]/g, '?'))}`;
  return ascii ? plain : `${plain}; filename*=${extended(name)}`;
}

/** A token stays bare; anything else is a quoted-string with `\` and `"` escaped. */
function quoted(value: string): string {
  return /^[!#$%&'*+.0-9A-Z^_`a-z|~-]+$/.test(value) ? value : `"${value.replace(/[\\"]/g, '\\$&')}"`;
}

/** RFC 8187 ext-value: UTF-8, every byte outside attr-char percent-encoded. */
function extended(value: string): string {
  // eslint-disable-next-line no-control-regex
  return `UTF-8''${encodeURIComponent(value).replace(/[\x00-\x20"'()*,/:;<=>?@[\\\]{}\x7f]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)}`;
}
