import type { Engine } from '../engine/engine';

/**
 * How long a webhook of a call this package placed waits for the step that placed it. The
 * provider waits 15 s for an answer; this leaves it time for the flow's first round.
 */
export const WAIT_FOR_PLACING_MS = 5000;
const LOOK_EVERY_MS = 50;

/**
 * The seq of the Call out request a webhook's URL names (`?callOut=<seq>`, see callOutUrl), or
 * undefined: a URL without it is any other call's, or of a call placed before it was added.
 */
export function placingRequest(value: unknown): number | undefined {
  const seq = typeof value === 'string' ? Number(value) : NaN;
  return Number.isSafeInteger(seq) && seq > 0 ? seq : undefined;
}

/**
 * The provider may post a placed call's answer or status before the create's own answer has
 * reached the Call out step (a callee who picks up at once, a busy line, a slow network), so
 * before that step recorded the call under its CallSid. Recorded first, the answer would run as
 * a new incoming call at the Call start, and a status would find no Session for its outcome. So
 * such a webhook waits while the request that placed the call is still in its queue: the step
 * consumes it only after the call is recorded (or found uncertain), so afterwards the webhook's
 * item lands behind the call's. One read when the placing is over, as it nearly always is; at
 * most `waitMs`. Reads the store, so it also sees a request another instance is placing.
 */
export async function untilPlacingEnded(engine: Engine, environment: string, requestSeq: number, waitMs = WAIT_FOR_PLACING_MS): Promise<void> {
  const store = engine.storeOf(environment);
  if (!store) return;
  const until = Date.now() + waitMs;
  while ((await store.pending(requestSeq)) && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, LOOK_EVERY_MS));
  }
}
