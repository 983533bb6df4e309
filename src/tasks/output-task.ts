import { engineFor } from '../engine/engine';
import type { RED, RedNode } from '../model/red';
import { runTask } from '../kit/task-runner';

interface OutputTaskConfig {
  text?: string;
  attachments?: string;
}

/** OutputTask: says its text (and Attachments) on the Session's Channel. */
export function outputTask(red: RED, node: RedNode, config: OutputTaskConfig): void {
  const engine = engineFor(red);
  node.on('input', (msg, send, done) => {
    runTask(engine, node, msg, send, done, async (session) => {
      const said = await engine.behaviourOf(session).output(engine.taskContext(session, msg, node), config.text ?? '', config.attachments ?? '');
      engine.addHistory(session, {
        from: 'bot',
        kind: 'message',
        text: said.text,
        ...(said.files?.length ? { files: said.files } : {}),
        ...(said.detail !== undefined ? { detail: said.detail } : {}),
      });
      node.status({});
      return { next: 'output' };
    });
  });
}
