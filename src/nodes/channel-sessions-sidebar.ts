import { unsupportedNode } from '../kit/node-support';
import type { RED } from '../model/red';

/**
 * The editor plugin (Test chat and Sessions sidebar); its runtime side lives in the core set. On a
 * Node.js the package does not support it is not registered, so the editor gets no sidebar whose
 * routes are missing (a rejection, not a throw: Node-RED prints a thrown plugin error's stack; it
 * logs no rejected plugin, so the core set's one line stays the only one).
 */
export = function registerSidebar(RED: RED): Promise<void> | void {
  const refusal = unsupportedNode();
  // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors
  if (refusal) return Promise.reject(`@channel-sessions/node-red needs Node.js ${refusal} or later`);
  RED.plugins?.registerPlugin('channel-sessions-sidebar', { type: 'channel-sessions-sidebar' });
};
