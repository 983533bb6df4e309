import type { Engine } from '../engine/engine';
import type { SessionRecord } from '../model/session';

/** The refusal a click on a button of an earlier, already answered question gets. */
export const STALE_ANSWER = 'That button belongs to a question already answered; only the buttons of the question now waiting answer it';

/**
 * Whether a click on a button of the bot message sent at `asked` (its transcript line's time) comes
 * too late: the person has answered since that message, so its buttons no longer answer anything.
 * A click that names no message is not judged (as before).
 */
export async function isStaleAnswer(engine: Engine, session: SessionRecord, asked: unknown): Promise<boolean> {
  if (typeof asked !== 'number' || !Number.isFinite(asked)) return false;
  const { history } = await engine.storyOf(session);
  let at = -1;
  history.forEach((h, i) => {
    if (h.from === 'bot' && h.at === asked) at = i;
  });
  if (at < 0) return true;
  return history.slice(at + 1).some((h) => h.from === 'user');
}
