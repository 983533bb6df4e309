import type { RED } from '../model/red';
import type { ActiveSessions } from './active-sessions';
import type { TokenTracker } from './token-tracker';

/**
 * Follows each Session token through the runtime's message hooks, so the tracker knows when a
 * token stopped moving (the flow ended without a wait or an EndTask). Installed once per runtime:
 * hooks of an earlier engine are replaced.
 */
export function installTokenHooks(red: RED, active: ActiveSessions, tracker: TokenTracker): void {
  // By step, not Session id: a token of a step a deploy cut must not count for the step run again.
  const idOf = (msg: unknown): number | undefined => active.stepOfToken(msg);
  const hooks = red.hooks;
  for (const name of ['preDeliver', 'onReceive', 'onComplete']) {
    try {
      hooks.remove(`${name}.channelSessions`);
    } catch {
      // not there yet
    }
  }
  hooks.add('preDeliver.channelSessions', (event) => {
    const id = idOf(event.msg);
    if (id) tracker.delivered(id, event.msg, event.destination?.id);
  });
  hooks.add('onReceive.channelSessions', (event) => {
    const id = idOf(event.msg);
    if (id) tracker.received(id, event.msg, event.destination?.id);
  });
  hooks.add('onComplete.channelSessions', (event) => {
    const id = idOf(event.msg);
    if (id) tracker.completed(id, event.node?.id);
  });
}
