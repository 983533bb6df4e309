import type { RED } from '../model/red';

/** The editor plugin (Test chat and Sessions sidebar); its runtime side lives in the core set. */
export = function registerSidebar(RED: RED): void {
  RED.plugins?.registerPlugin('channel-sessions-sidebar', { type: 'channel-sessions-sidebar' });
};
