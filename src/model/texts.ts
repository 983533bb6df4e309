import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The part of a runtime's RED that says texts (RED._). Its own type rather than model/red.ts's, so
 * that the Session stores, which red.ts names, can say texts without an import circle.
 */
export interface Speaker {
  _?(key: string, substitutions?: Record<string, unknown>): string;
}

/** The package's node sets; each has its message catalog in locales/<language>/<set>.json. */
export type NodeSet = 'core' | 'teamchat' | 'voice' | 'messaging';

/**
 * A text a user reads at runtime (a node status, a warning, a deploy log line), in the runtime's
 * language: through `RED._`, named with its node set's namespace so it is found whichever node
 * set's RED the caller holds. Where the runtime has no catalog for it (node-red-node-test-helper's
 * `RED._` answers the key itself), the English catalog shipped beside the nodes is read instead.
 */
export function runtimeText(red: Speaker | undefined, set: NodeSet, key: string, substitutions: Record<string, unknown> = {}): string {
  const full = `@channel-sessions/node-red/channel-sessions-${set}:${key}`;
  const said = typeof red?._ === 'function' ? red._(full, substitutions) : full;
  if (typeof said === 'string' && said && said !== full && said !== key) return said;
  return english(set, key, substitutions);
}

/**
 * A runtime text of the core node set: what the Session stores are handed beside their log, since
 * they sit below everything that holds a RED. `say('runtime.log.…', { … })`.
 */
export type Say = (key: string, substitutions?: Record<string, unknown>) => string;

/**
 * `Say` through a runtime's RED. Without one (a context store Node-RED builds from settings.js,
 * before any node set is loaded) it says the English catalog's text.
 */
export function coreSay(red?: Speaker): Say {
  return (key, substitutions) => runtimeText(red, 'core', key, substitutions);
}

/** The English text, with Node-RED's `__name__` substitutions. */
function english(set: NodeSet, key: string, substitutions: Record<string, unknown>): string {
  let found: unknown;
  try {
    found = key.split('.').reduce<unknown>((at, part) => (at as Record<string, unknown> | undefined)?.[part], readCatalog(set));
  } catch {
    found = undefined;
  }
  const template = typeof found === 'string' ? found : key;
  return template.replace(/__(\w+)__/g, (whole, name: string) => (name in substitutions ? String(substitutions[name]) : whole));
}

/** The built package keeps the catalogs beside the node sets (dist/nodes/locales), as Node-RED needs. */
function readCatalog(set: NodeSet): unknown {
  return JSON.parse(readFileSync(join(__dirname, '..', 'nodes', 'locales', 'en-US', `${set}.json`), 'utf8'));
}
