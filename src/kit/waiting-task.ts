import type { Engine } from '../engine/engine';
import type { SessionRecord, TokenMessage } from '../model/session';
import type { InboundMessage } from '../engine/starts';
import { TaskError } from '../model/errors';
import type { RedNode } from '../model/red';
import { routeErrorLater } from './task-runner';

/** What a Task that waits for the conversation's next message does with it. */
export interface WaitingTask {
  /** Seconds before `timedOut`; 0 or none waits until the Session expires. */
  timeoutSeconds?: number;
  /** The next message answers the wait (a message carrying an error, or a `noReply` for `timedOut`, never gets here). */
  answered(session: SessionRecord, message: InboundMessage, token: TokenMessage): Promise<void> | void;
  timedOut?(session: SessionRecord, token: TokenMessage): Promise<void>;
}

/**
 * Registers a node Sessions wait at, for as long as it is deployed: a message the module could not
 * read (it carries an error: nothing said, an empty recording) goes down the node's error branch,
 * anything else to `answered`.
 */
export function registerWaitingTask(engine: Engine, node: RedNode, task: WaitingTask): void {
  engine.registerWaitingNode({
    node,
    timeoutSeconds: task.timeoutSeconds,
    async resume(session, message, token) {
      // The Channel timed the wait itself (a call's Gather): its silence is this Task's "no reply".
      if (message.noReply && task.timeoutSeconds && task.timedOut) {
        await task.timedOut(session, token);
        return;
      }
      if (message.error) {
        routeErrorLater(engine, node, session, token, new TaskError(message.error.code, message.error.message));
        return;
      }
      await task.answered(session, message, token);
    },
    ...(task.timedOut ? { timedOut: task.timedOut.bind(task) } : {}),
  });
  node.on('close', (_removed, done) => {
    engine.unregisterWaitingNode(node);
    done();
  });
}
