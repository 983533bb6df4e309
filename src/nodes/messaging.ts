import type { RED } from '../engine/red';

/** The messaging module's node set (nodes are added by the messaging module). */
export = function registerMessaging(_RED: RED): void {};
