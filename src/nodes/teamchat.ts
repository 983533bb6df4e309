import type { RED } from '../engine/red';

/** The teamchat module's node set (nodes are added by the teamchat module). */
export = function registerTeamchat(_RED: RED): void {};
