import { runtimeKey, type RED } from '../model/red';

/**
 * State that belongs to one Node-RED runtime, made at its first use there and found again by
 * every node set of the package (each gets its own RED object: see runtimeKey). A WeakMap, so a
 * runtime that is gone takes its state with it.
 */
export function perRuntime<T>(make: (red: RED) => T): (red: RED) => T {
  const states = new WeakMap<object, T>();
  return (red) => {
    const key = runtimeKey(red);
    let state = states.get(key);
    if (state === undefined) {
      state = make(red);
      states.set(key, state);
    }
    return state;
  };
}
