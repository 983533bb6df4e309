import type { Engine } from '../engine/engine';
import type { RED } from '../model/red';
import { detail } from './session-views';
import { STALE_ANSWER, isStaleAnswer } from './stale-answer';

/** As Slack bounds a button's value and text (2000 and 75 characters); kept generous. */
const MAX_FIELD = 2000;

/**
 * The Test chat's clicks: a button or menu choice in a block message preview answers the test
 * Session's waiting InputTask the way a click in Slack does (the Store variable gets the value,
 * `<variable>_action` the fields). The clicking user is the Session's sender (the start's test
 * data `from`).
 */
export function registerTestClicks(red: RED, engine: Engine): void {
  const write = red.auth.needsPermission('channel-sessions.write');
  red.httpAdmin.post(
    '/channel-sessions/test-sessions/:id/actions',
    write,
    (req, res) =>
      void (async () => {
        const session = await engine.findSession(req.params.id);
        if (!session?.isTest) {
          res.status(404).json({ error: 'No test Session with that id' });
          return;
        }
        const body = (req.body ?? {}) as Record<string, unknown>;
        const field = (name: string): string | undefined => {
          const v = body[name];
          if (v === undefined || v === null) return '';
          return typeof v === 'string' && v.length <= MAX_FIELD ? v : undefined;
        };
        const [actionId, blockId, value, text] = ['action_id', 'block_id', 'value', 'text'].map(field);
        if (actionId === undefined || blockId === undefined || value === undefined || text === undefined) {
          res.status(400).json({ error: `action_id, block_id, value and text must be strings of at most ${MAX_FIELD} characters` });
          return;
        }
        // A click on a button of a question already answered (a page that did not know yet) is refused.
        if (await isStaleAnswer(engine, session, body.asked)) {
          res.status(409).json({ accepted: false, stale: true, error: STALE_ANSWER });
          return;
        }
        const execution = session.vars.execution as { channelSender?: unknown } | undefined;
        const user = typeof execution?.channelSender === 'string' && execution.channelSender ? execution.channelSender : 'U0TESTUSER';
        const action = { action_id: actionId, block_id: blockId, value, text: text || value, user };
        const accepted = await engine.deliverToSession(session.id, { text: value, said: action.text, files: [], answerFields: { action } });
        res.status(accepted ? 200 : 409).json({ accepted, ...(await detail(engine, (await engine.findSession(session.id)) ?? session)) });
      })().catch((err: Error) => res.status(500).json({ error: err.message })),
  );
}
