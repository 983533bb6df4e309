import { unsupportedNode } from '../kit/node-support';
import { registerPlaceholders } from '../kit/placeholder-nodes';
import type { RED } from '../model/red';

/**
 * The core node set, loaded only on a Node.js the package supports. Elsewhere its node types are
 * inert placeholders with a red status naming the Node.js needed, so that every other flow runs.
 */
export = function registerCore(RED: RED): void {
  const needs = unsupportedNode();
  if (needs) {
    // Said once for the package, by the core set: every set has the same reason.
    RED.log.warn(RED._('nodeSupport.log', { needs, version: process.version }));
    registerPlaceholders(RED, 'core', needs);
    return;
  }
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  (require('./sets/core') as (red: RED) => void)(RED);
};
