import { engineFor } from '../engine/engine';
import { TaskError } from '../model/errors';
import { filesOf } from '../files/file-values';
import { describeFiles } from '../files/intake';
import { takeOpeningAnswer } from '../engine/opening-answer';
import type { RED, RedNode } from '../model/red';
import { bareVariable } from '../kit/start-node';
import { runTask } from '../kit/task-runner';
import { registerWaitingTask } from '../kit/waiting-task';

interface InputTaskConfig {
  prompt?: string;
  resultVariable?: string;
  filesVariable?: string;
  timeout?: number | string;
}

/**
 * InputTask: asks its prompt, then the Session waits; the next message of the conversation is
 * stored and the token goes on. With a timeout, output 3 ("no reply") fires when none comes.
 */
export function inputTask(red: RED, node: RedNode, config: InputTaskConfig): void {
  const engine = engineFor(red);
  const resultVariable = bareVariable(config.resultVariable);
  const filesVariable = bareVariable(config.filesVariable);
  const timeoutSeconds = Number(config.timeout) || 0;

  node.on('input', (msg, send, done) => {
    runTask(
      engine,
      node,
      msg,
      send,
      done,
      async (session) => {
        if (!resultVariable) throw new TaskError(3005, 'Store result in is empty: name the variable that receives the reply');
        // The shared Start on messaging: the opening message is this answer, so nothing is asked.
        const opening = takeOpeningAnswer(session);
        if (opening) {
          storeAnswer(msg.vars, opening.text, opening.answerFields);
          if (filesVariable) msg.vars[filesVariable] = opening.files;
          else msg.vars[`${resultVariable}_files`] = filesOf(opening.files).map(({ name, type, size }) => ({ name, type, size }));
          return { next: 'output' };
        }
        const said = await engine.behaviourOf(session).prompt(engine.taskContext(session, msg, node), config.prompt ?? '', {
          filesVariable: filesVariable || undefined,
          noReplySeconds: timeoutSeconds > 0 ? timeoutSeconds : undefined,
        });
        if (said.text || said.files?.length)
          engine.addHistory(session, { from: 'bot', kind: 'prompt', text: said.text, ...(said.files?.length ? { files: said.files } : {}) });
        return { next: 'wait' };
      },
      { warnEndedToken: true },
    );
  });

  registerWaitingTask(engine, node, {
    timeoutSeconds,
    async answered(session, message, token) {
      storeAnswer(token.vars, message.text, message.answerFields);
      if (filesVariable) token.vars[filesVariable] = await engine.keepFiles(session, message.files, node.id);
      else token.vars[`${resultVariable}_files`] = describeFiles(message.files);
      node.send([token, null]);
    },
    async timedOut(_session, token) {
      node.send([null, null, token]);
    },
  });

  /** The text into Store result in; each answer field as `<variable>_<name>` (undefined removes it). */
  function storeAnswer(vars: Record<string, unknown>, text: string, fields: Record<string, unknown> = {}): void {
    vars[resultVariable] = text;
    for (const [name, value] of Object.entries(fields)) {
      if (value === undefined) delete vars[`${resultVariable}_${name}`];
      else vars[`${resultVariable}_${name}`] = value;
    }
  }
}
