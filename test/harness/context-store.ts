/**
 * A Node-RED context store as the memory Session store's mirror sees it (`get`, `set`, `keys` with
 * callbacks), over a map the test can read and fill: what a real context store would keep.
 */
export function contextStoreOver(values: Map<string, unknown>) {
  return {
    get: (key: string, _store: string | undefined, cb: (err: Error | null, value: unknown) => void) => cb(null, values.get(key)),
    set: (key: string, value: unknown, _store: string | undefined, cb: (err: Error | null) => void) => {
      if (value === undefined) values.delete(key);
      else values.set(key, value);
      cb(null);
    },
    keys: (_store: string | undefined, cb: (err: Error | null, keys: string[]) => void) => cb(null, [...values.keys()]),
  };
}
