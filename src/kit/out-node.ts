import { engineFor, type Engine, type OutStart } from '../engine/engine';
import { runtimeText } from '../model/texts';
import type { StartKind } from '../engine/starts';
import { TaskError, asTaskError } from '../model/errors';
import type { RED, RedNode } from '../model/red';
import type { TokenMessage } from '../model/session';
import { setUpStartNode, type StartConfig } from './start-node';
import { errorStatus } from './task-runner';

/** The Session an out node asks for: in which conversation of its Environment, and what it opens with. */
export interface OutTarget {
  conversation: string;
  request: Omit<OutStart, 'nodeId' | 'vars'>;
  /** How the person is named in a 4030 ("+15550001111", "user U123"). */
  who: string;
}

/**
 * An out node (Text out, Message first): a start the test chat offers, with an input. Each message
 * that reaches it is checked by `prepare` (a TaskError there leaves on output 2 before anything is
 * recorded or sent), then the engine opens the Session at this node, and output 1 runs on with its
 * token. A conversation that already has a live Session gets 4030 on output 2 and nothing else.
 */
export function setUpOutNode(
  red: RED,
  node: RedNode,
  config: StartConfig,
  kind: StartKind,
  environmentType: string,
  prepare: (msg: TokenMessage, environment: string) => Promise<OutTarget>,
): void {
  const engine = engineFor(red);
  setUpStartNode(red, node, config, { ...kind, outbound: true }, { environment: config.environment, environmentType });
  if (!config.environment) node.error(runtimeText(red, 'core', 'runtime.log.noEnvironment', { type: node.type, name: node.name || node.id }));

  node.on('input', (msg: TokenMessage, send, done) => {
    void openOut(red, engine, node, msg, prepare).then(
      () => done(),
      (err: unknown) => {
        // No Session: the message that came in leaves on output 2 with msg.error (its msg.vars,
        // whatever they hold, are left as they are), or goes to Catch nodes when output 2 is not wired.
        const error = asTaskError(err);
        node.status(errorStatus(red, error, 'dot'));
        if (node.wires?.[1]?.length) {
          msg.error = error.toInfo();
          send([null, msg]);
          done();
        } else done(error);
      },
    );
  });
}

async function openOut(red: RED, engine: Engine, node: RedNode, msg: TokenMessage, prepare: (msg: TokenMessage, environment: string) => Promise<OutTarget>) {
  // The Test chat promises that nothing reaches anyone: a test Session's token that reaches an out
  // node (a reminder call not answered, texted instead) opens a test Session there, playing the
  // node's Channel, which the chat follows. The node's Environment needs no credentials for it.
  if (msg.session?.isTest) {
    await openTestOut(red, engine, node, msg);
    return;
  }
  // The registration holds the Environment only when it is of the right kind.
  const environment = engine.startAt(node.id)?.environment;
  if (!environment) throw new TaskError(4008, `${node.type} has no Environment of its kind selected; nothing was sent`);
  const target = await prepare(msg, environment);
  const vars = msg.vars;
  if (vars !== undefined && (typeof vars !== 'object' || vars === null || Array.isArray(vars))) {
    throw new TaskError(3005, "msg.vars must be an object (the new Session's first variables); nothing was sent");
  }
  let outcome;
  try {
    outcome = await engine.openOut(environment, target.conversation, { ...target.request, nodeId: node.id, ...(vars ? { vars: plain(vars) } : {}) });
  } catch (err) {
    throw new TaskError(4001, `the request could not be recorded: ${(err as Error).message}; nothing was sent`);
  }
  if (outcome.kind === 'busy') {
    throw new TaskError(
      4030,
      `${target.who} already has a live Session ${outcome.session.id} on ${outcome.session.channel} of "${engine.environmentName(environment)}"; nothing was sent`,
    );
  }
  if (outcome.kind === 'refused') throw new TaskError(4001, outcome.reason);
  node.status({ fill: 'green', shape: 'dot', text: runtimeText(red, 'core', 'runtime.status.opened', { time: new Date().toLocaleTimeString() }) });
}

/**
 * A test Session at the out node, with what the message carries as its test data (its addresses and
 * text where they are plain text, its `msg.vars`) over the node's own test data.
 */
async function openTestOut(red: RED, engine: Engine, node: RedNode, msg: TokenMessage): Promise<void> {
  const testData: Record<string, unknown> = {};
  for (const key of ['to', 'from', 'user', 'channel']) if (typeof msg[key] === 'string' && msg[key]) testData[key] = msg[key];
  if (typeof msg.payload === 'string') testData.text = msg.payload;
  if (msg.vars !== undefined) testData.vars = plain(msg.vars);
  const session = await engine.startTest(node.id, testData, { asChannel: true, from: msg.session.id });
  node.status({ fill: 'grey', shape: 'dot', text: runtimeText(red, 'core', 'runtime.status.openedInTestChat', { session: session.id }) });
}

/** The first variables go into the store as JSON: what JSON cannot hold is refused here, not at the first wait. */
function plain(vars: Record<string, unknown>): Record<string, unknown> {
  try {
    return JSON.parse(JSON.stringify(vars)) as Record<string, unknown>;
  } catch (err) {
    throw new TaskError(3005, `msg.vars cannot be kept as the Session's variables (${(err as Error).message}); nothing was sent`);
  }
}
