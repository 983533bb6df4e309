import type { Engine } from '../engine/engine';
import { PLACED_KIND } from './call-out';

/**
 * How long the answer of a call this package placed waits for the placing step to record the
 * call. The provider waits 15 s for an answer; this leaves it time for the flow's first round.
 */
export const ANSWER_WAITS_FOR_PLACED_MS = 5000;
const LOOK_EVERY_MS = 50;

/**
 * The provider may post a placed call's answer before the create's own answer has reached the
 * Call out step (a callee that picks up at once, a slow network), so before that step recorded
 * the call under its CallSid. Recorded first, the answer would run as a new incoming call at the
 * Call start. So the answer of a call placed here (its URL says so) waits until the call's Session
 * is live or its placing is recorded ahead of it, at most `waitMs`. It then goes on as before: a
 * call whose placing was never recorded (the create's answer was lost) starts at the Call start.
 * Reads the store, so it also sees a call another instance placed.
 */
export async function untilPlacedRecorded(engine: Engine, environment: string, callSid: string, waitMs = ANSWER_WAITS_FOR_PLACED_MS): Promise<void> {
  const store = engine.storeOf(environment);
  const ref = { environment, conversation: callSid };
  const until = Date.now() + waitMs;
  for (;;) {
    if (await engine.liveSessionFor(environment, callSid)) return;
    if ((await store?.next(ref))?.kind === PLACED_KIND) return;
    if (Date.now() >= until) return;
    await new Promise((resolve) => setTimeout(resolve, LOOK_EVERY_MS));
  }
}
