/**
 * Context keys as flows write them (`count`, `user.name`, `list[0]`, `map["a b"]`), split into the
 * top-level key (one Redis hash field, one SQLite row) and the path inside its JSON value.
 */
export function splitKey(key: string): string[] {
  const parts: string[] = [];
  const head = /^[^.[\]]+/.exec(key);
  if (!head) throw invalid(key);
  parts.push(head[0]);
  let rest = key.slice(head[0].length);
  while (rest) {
    const m = /^\.([^.[\]]+)/.exec(rest) ?? /^\[(\d+)\]/.exec(rest) ?? /^\["((?:[^"\\]|\\.)*)"\]/.exec(rest) ?? /^\['((?:[^'\\]|\\.)*)'\]/.exec(rest);
    if (!m) throw invalid(key);
    parts.push(m[1]);
    rest = rest.slice(m[0].length);
  }
  return parts;
}

function invalid(key: string): Error {
  const err = new Error(`Invalid context key: ${key}`) as Error & { code: string };
  err.code = 'INVALID_EXPR';
  return err;
}

export function getPath(root: unknown, path: string[]): unknown {
  let value = root;
  for (const part of path) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

/** Sets (or, for undefined, deletes) a value inside `root`, creating objects and arrays on the way. */
export function setPath(root: unknown, path: string[], value: unknown): unknown {
  if (!path.length) return value;
  const top = root !== null && typeof root === 'object' ? root : /^\d+$/.test(path[0]) ? [] : {};
  let at = top as Record<string, unknown>;
  for (let i = 0; i < path.length - 1; i++) {
    const next = at[path[i]];
    if (next === null || typeof next !== 'object') at[path[i]] = /^\d+$/.test(path[i + 1]) ? [] : {};
    at = at[path[i]] as Record<string, unknown>;
  }
  const last = path[path.length - 1];
  if (value === undefined) delete at[last];
  else at[last] = value;
  return top;
}

/**
 * A stored top-level value. One that is not JSON (edited by hand) throws, naming the key and its
 * scope: read as missing, the flow would not know, and a nested set would write over it. JSON's
 * own message is left out: it quotes the value, which may be a secret a flow keeps there.
 */
export function parseValue(text: string, scope: string, key: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(`the value of ${key} (${scope}) is not JSON; set it whole to replace it`);
  }
}
