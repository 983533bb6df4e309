import { engineFor } from '../engine/engine';
import type { RED, RedNode } from '../model/red';
import { runTask } from '../kit/task-runner';

/** EndTask: completes the Session and releases its conversation; says nothing. */
export function endTask(red: RED, node: RedNode): void {
  const engine = engineFor(red);
  node.on('input', (msg, send, done) => {
    runTask(engine, node, msg, send, done, async (session) => {
      await engine.behaviourOf(session).end(engine.taskContext(session, msg, node));
      await engine.complete(session, msg);
      return { next: 'end' };
    });
  });
}
