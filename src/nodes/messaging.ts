import { unsupportedNode } from '../kit/node-support';
import { registerPlaceholders } from '../kit/placeholder-nodes';
import type { RED } from '../model/red';

/**
 * The messaging node set, loaded only on a Node.js the package supports. Elsewhere its node types are
 * inert placeholders with a red status naming the Node.js needed, so that every other flow runs.
 */
export = function registerMessaging(RED: RED): void {
  const needs = unsupportedNode();
  if (needs) {
    registerPlaceholders(RED, 'messaging', needs);
    return;
  }
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  (require('./sets/messaging') as (red: RED) => void)(RED);
};
