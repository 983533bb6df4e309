import type { RED } from '../engine/red';

/** The voice module's node set (nodes are added by the voice module). */
export = function registerVoice(_RED: RED): void {};
