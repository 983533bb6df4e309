import type { Engine } from '../engine/engine';
import { TaskError, asTaskError } from '../model/errors';
import type { Done, RED, RedNode, Send } from '../model/red';
import type { SessionRecord, TokenMessage } from '../model/session';
import { runtimeText } from '../model/texts';

/** How a Task finished: the token goes on (on an output), waits, or the Session ends. */
export type TaskOutcome = { next: 'output'; index?: number } | { next: 'wait' } | { next: 'end' };

/**
 * Runs a Task's body for a token and routes the result: output 1 on success; on a TaskError the
 * error branch (output 2) with `msg.error` when it is wired, otherwise `done(err)` so Catch nodes
 * see it, and the Session records the error and ends, releasing its conversation.
 */
export function runTask(
  engine: Engine,
  node: RedNode,
  msg: TokenMessage,
  send: Send,
  done: Done,
  body: (session: SessionRecord) => Promise<TaskOutcome>,
  options: { needsSession?: boolean; warnEndedToken?: boolean } = {},
): void {
  const session = engine.sessionOf(msg);
  if (!session && options.needsSession !== false) {
    if (msg?.session?.id) {
      if (engine.whyDropped(msg) === 'cut') {
        // Its step was cut by a deploy and runs again from its recorded message: this token is the old run's.
        node.debug(`token of Session ${msg.session.id} from a step a deploy cut dropped (the step runs again)`);
      } else if (options.warnEndedToken) {
        // A question that cannot be asked: the person's conversation is left without it, so say so.
        node.warn(runtimeText(engine.red, 'core', 'runtime.log.endedToken', { session: msg.session.id, type: node.type }));
      } else {
        // The Session already ended (another branch reached EndTask, or it expired): drop the token.
        node.debug(`token of ended Session ${msg.session.id} dropped`);
      }
      done();
      return;
    }
    const error = new TaskError(4012, `${node.type} needs a Session token (msg.session); start the flow with a start node`);
    node.status(errorStatus(engine.red, error, 'ring'));
    done(error);
    return;
  }
  body(session as SessionRecord)
    .then(async (outcome) => {
      if (outcome.next === 'output') {
        const outputs: unknown[] = [];
        outputs[outcome.index ?? 0] = msg;
        send(outputs);
        if (session) engine.tokenMoved(session);
      } else if (outcome.next === 'wait' && session) {
        await engine.wait(session, msg, node);
      }
      done();
    })
    .catch((err: unknown) => {
      if (session && !engine.sessionOf(msg) && engine.whyDropped(msg) === 'cut') {
        // The step was cut while the Task ran (a deploy, a store that could not record what it
        // sent): it runs again from its recorded message, and this token's error is the old run's.
        node.debug(`token of Session ${session.id} from a step that was cut dropped (the step runs again)`);
        done();
        return;
      }
      routeError(engine, node, session, msg, send, done, asTaskError(err));
    });
}

export function routeError(
  engine: Engine,
  node: RedNode,
  session: SessionRecord | undefined,
  msg: TokenMessage,
  send: Send,
  done: Done,
  error: TaskError,
): void {
  node.status(errorStatus(engine.red, error, 'dot'));
  if (node.wires?.[1]?.length) {
    msg.error = error.toInfo();
    // Placeholders read msg.vars, so `{error.message}` works on the error branch too.
    if (msg.vars) msg.vars.error = msg.error;
    if (session) engine.recordError(session, error.toInfo(), node.id);
    send([null, msg]);
    if (session) engine.tokenMoved(session);
    done();
    return;
  }
  if (session) void engine.fail(session, error, node.id);
  done(error);
}

/** The red status of a Task or out node that failed: its error's code and name ("4012 TaskSessionMissing"). */
export function errorStatus(red: RED, error: TaskError, shape: 'ring' | 'dot'): { fill: 'red'; shape: string; text: string } {
  return { fill: 'red', shape, text: runtimeText(red, 'core', 'runtime.status.error', { code: error.code, codeName: error.codeName }) };
}

/** The same routing for a token a waiting node sends later, outside any input handler. */
export function routeErrorLater(engine: Engine, node: RedNode, session: SessionRecord, token: TokenMessage, error: TaskError): void {
  routeError(
    engine,
    node,
    session,
    token,
    (m) => node.send(m),
    (err) => {
      if (err) node.error(err, token);
    },
    error,
  );
}
