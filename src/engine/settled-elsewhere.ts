import type { DeliveryOutcome } from './delivery';
import type { ConversationRef, SessionStore } from '../stores/session-store';

/** How often a shared store is asked whether an item was handled by another instance. */
const POLL_MS = [20, 50, 100, 200, 250];
/** Past this, the waiter gives up (a conversation stuck that long is reported by its own log lines). */
const GIVE_UP_MS = 10 * 60 * 1000;

/**
 * With a store several instances share, an item this instance recorded may be handled by another
 * one (it held the conversation's lease when the item arrived, or took it over). The local waiter
 * would then never hear of it: this watches the store until the item is consumed, and settles
 * the waiter with the conversation's Session as the store now has it. `done()` tells it the item
 * was settled here; it then stops at its next look. Bounded: one timer per waiting item, for at
 * most GIVE_UP_MS.
 */
export function settleWhenHandledElsewhere(
  store: SessionStore,
  ref: ConversationRef,
  seq: number,
  done: () => boolean,
  settle: (outcome: DeliveryOutcome) => void,
): void {
  const started = Date.now();
  let round = 0;
  const look = async (): Promise<void> => {
    if (done()) return;
    let stillThere = true;
    try {
      stillThere = await store.pending(seq);
    } catch {
      // Redis away: look again later; the item is still recorded
    }
    if (done()) return;
    if (!stillThere) {
      const session = await store.liveSession(ref).catch(() => undefined);
      if (!done()) settle(session ? { kind: 'continued', session } : { kind: 'ignored' });
      return;
    }
    if (Date.now() - started > GIVE_UP_MS) {
      settle({ kind: 'refused', reason: `message ${seq} of conversation ${ref.conversation} was not handled within ${GIVE_UP_MS / 60000} minutes` });
      return;
    }
    const timer = setTimeout(() => void look(), POLL_MS[Math.min(round++, POLL_MS.length - 1)]);
    timer.unref();
  };
  const first = setTimeout(() => void look(), POLL_MS[0]);
  first.unref();
}
