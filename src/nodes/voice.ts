import { unsupportedNode } from '../kit/node-support';
import type { RED } from '../model/red';

/**
 * The voice node set, loaded only on a Node.js the package supports. Elsewhere the set registers
 * nothing and fails with one line that Node-RED logs and shows in Manage palette (a string: an
 * Error object shows there as `[object Object]`).
 */
export = function registerVoice(RED: RED): Promise<void> | void {
  const refusal = unsupportedNode();
  // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors
  if (refusal) return Promise.reject(refusal);
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  (require('./sets/voice') as (red: RED) => void)(RED);
};
