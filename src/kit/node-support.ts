import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Whether this Node.js can run the package, checked by each node set before it loads anything
 * else: on an older Node, a dependency or a built-in the sets need may fail to load, and Node-RED
 * would show a TypeError from deep inside it instead of saying what is wrong. This file requires
 * only Node's own fs and path, which every Node has. Gives the Node.js needed, or nothing when
 * this one will do.
 *
 * The floor is package.json's `engines.node`, read here so that the check and what npm says agree.
 */
export function unsupportedNode(version = process.version): string | undefined {
  const needs = neededNode();
  if (!needs || !older(version.replace(/^v/, ''), needs)) return undefined;
  return needs;
}

/** `engines.node` of the package's own package.json (">=22.9.0" gives "22.9.0"). */
function neededNode(): string | undefined {
  try {
    const pkg = JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8')) as { engines?: { node?: string } };
    const match = /^\s*>=\s*v?(\d+(?:\.\d+){0,2})\s*$/.exec(pkg.engines?.node ?? '');
    return match?.[1];
  } catch {
    return undefined;
  }
}

function older(version: string, than: string): boolean {
  const a = version.split('.').map((n) => parseInt(n, 10) || 0);
  const b = than.split('.').map((n) => parseInt(n, 10) || 0);
  for (let i = 0; i < 3; i++) {
    if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) < (b[i] ?? 0);
  }
  return false;
}
