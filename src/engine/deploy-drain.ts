import type { HookEvent, RED } from '../model/red';
import type { SessionRecord } from '../model/session';
import { runtimeText } from '../model/texts';
import type { ActiveSessions } from './active-sessions';
import { holdsStopped, type StoppedNodes } from './deploy-cut';
import type { TokenTracker } from './token-tracker';

/** The grace a step in progress gets when settings.js names none (`docker stop` waits 10 s before it kills). */
export const DEFAULT_DEPLOY_DRAIN_MS = 8_000;
/** Node-RED's own time-out for a node's close when settings.js `nodeCloseTimeout` names none. */
const NODE_CLOSE_TIMEOUT_MS = 15_000;
/** At most this many tokens wait for the flows to start again (each belongs to a step in progress). */
const MAX_PARKED = 10_000;
/** Steps cut because their next node is gone are named together, this long after the first. */
const LOST_SAID_AFTER_MS = 1_000;

/**
 * settings.js `channelSessions.deployDrain`: milliseconds a step in progress on nodes that stop
 * has to reach its next wait or end; 0 cuts it at once. Kept a second below Node-RED's close
 * time-out, so the grace is over before Node-RED gives up on any node. A value that is not a
 * number of milliseconds comes back as `invalid` beside the default, for the caller to say so.
 */
export function deployDrainMs(settings: Record<string, any>): { ms: number; invalid?: unknown } {
  const closeTimeout = Number(settings.nodeCloseTimeout) > 0 ? Number(settings.nodeCloseTimeout) : NODE_CLOSE_TIMEOUT_MS;
  const cap = Math.max(0, closeTimeout - 1000);
  const asked: unknown = settings.channelSessions?.deployDrain;
  if (asked === undefined || asked === null) return { ms: Math.min(DEFAULT_DEPLOY_DRAIN_MS, cap) };
  const ms = typeof asked === 'number' || (typeof asked === 'string' && asked.trim() !== '') ? Number(asked) : Number.NaN;
  if (!Number.isFinite(ms) || ms < 0) return { ms: Math.min(DEFAULT_DEPLOY_DRAIN_MS, cap), invalid: asked };
  return { ms: Math.min(ms, cap) };
}

export interface DrainParts {
  red: RED;
  active: ActiveSessions;
  tracker: TokenTracker;
  /** False from `flows:stopping` to `flows:started`. */
  flowsRunning(): boolean;
  /** How many times the flows stopped: a step that began before the latest stop is from before it. */
  deploys(): number;
  /** The nodes holding a step's token now. */
  nodesHolding(step: number): Iterable<string>;
}

/** A token sent while the flows restart, to the node of that id once they run. */
interface Parked {
  step: number;
  destination: string;
  msg: unknown;
  clone: boolean;
}

/**
 * When the flows stop (a deploy of any kind, or the runtime stopping), a step in progress on the
 * nodes that stop gets a grace (`deployDrain`) to reach its next wait or end; only a step still
 * running after it is cut, and runs again from its recorded message (its replies may then go out
 * twice: the documented limit).
 *
 * Why it is done this way. Node-RED has no hook before it closes nodes: `flows:stopping` is
 * emitted synchronously (its listeners cannot delay it), and right after it Flow.stop removes
 * every stopping node from its flow's active nodes and closes them all in one pass (a close
 * handler's promise delays only the end of the stop, not the other closes). A message sent to a
 * node from then on is dropped: the router finds no node of that id; after a full deploy the old
 * flow never finds one again (a slow `http request` node's answer reaches nothing), while after a
 * modified deploy the same flow finds the new node of that id once it runs. So waiting in a close
 * handler would wait for tokens that cannot move. Instead, for the remainder of a step that began
 * before the flows stopped, this routes its token itself (a `preRoute` hook, which may stop
 * Node-RED's own routing): while the flows restart the token waits here, and once they run it goes
 * to the node of the same id in the new flows, as Node-RED itself does after a modified deploy and
 * as a waiting Session resumes at its node. The node holding the token when the flows stopped (a
 * Task awaiting its provider) finishes what it does and sends on. A token a closed node drops (a
 * delay node's timer) never comes back: its step is cut when the grace is over.
 *
 * A runtime that stops has no new flows to go on in; there the wait comes before Node-RED closes
 * anything (`beforeStop`, from the signal, see stop-signals.ts), while every node still runs.
 */
export class DeployDrain {
  readonly graceMs: number;
  private parked: Parked[] = [];
  /** While a stopping runtime waits for its steps: no step begins (webhooks are recorded and wait). */
  private holdingSteps = false;
  /** The runtime waited for its steps before it stopped: what is left is cut at once, already named. */
  private stopDrained = false;
  /** Steps cut because their token's next node is gone, to be named together (each a step in progress). */
  private lost: SessionRecord[] = [];

  constructor(private readonly parts: DrainParts) {
    const { ms, invalid } = deployDrainMs(parts.red.settings ?? {});
    this.graceMs = ms;
    if (invalid !== undefined) {
      parts.red.log.warn(`[channel-sessions] ${runtimeText(parts.red, 'core', 'runtime.log.deployDrainInvalid', { value: shown(invalid), ms })}`);
    }
    const hooks = parts.red.hooks;
    try {
      hooks.remove('preRoute.channelSessions');
    } catch {
      // not there yet
    }
    hooks.add('preRoute.channelSessions', (event) => this.route(event));
  }

  /** Whether steps must not begin now (a stopping runtime waits for those in progress). */
  get holding(): boolean {
    return this.holdingSteps;
  }

  /** The flows stop (`flows:stopping`, deploy number `deploys`): the steps on the stopping nodes get the grace. */
  flowsStopping(deploys: number, stopped: StoppedNodes): void {
    const { active, red } = this.parts;
    const onStopped = (step: number) => stopped === 'all' || holdsStopped(this.parts.nodesHolding(step), stopped);
    const before = active.runningBefore(deploys);
    const draining = new Set(before.filter(onStopped));
    if (this.stopDrained || this.graceMs === 0) {
      this.cut(deploys, draining, stopped, !this.stopDrained);
      return;
    }
    if (!before.length) return;
    if (draining.size) {
      const said = { count: draining.size, seconds: this.graceMs / 1000 };
      red.log.info(`[channel-sessions] ${runtimeText(red, 'core', 'runtime.log.drainWaiting', said)}`);
    }
    setTimeout(() => this.cut(deploys, draining, stopped, true), this.graceMs).unref();
  }

  /**
   * The flows run again: the tokens that waited go to their nodes in the new flows. A step whose
   * token was on its way to a node the deploy removed is cut (and named): it runs again from its
   * recorded message in the new flows.
   */
  flowsStarted(): void {
    for (const { step, destination, msg, clone } of this.parked.splice(0)) {
      if (this.deliver(step, destination, msg, clone)) continue;
      this.cutLost(step);
      this.parts.tracker.release(step);
    }
  }

  /**
   * The step's token was on its way to a node the new flows do not have: the step is cut. The
   * Sessions cut so within a second are named in one warning.
   */
  private cutLost(step: number): void {
    const { active } = this.parts;
    const session = active.inStep(step);
    if (!session || session.state !== 'running' || active.isAbandoned(session)) return;
    active.abandon(session);
    this.lost.push(session);
    if (this.lost.length > 1) return;
    setTimeout(() => this.sayCut(this.lost.splice(0), 'runtime.log.stepsCutNodeGone'), LOST_SAID_AFTER_MS).unref();
  }

  /**
   * A stopping runtime (SIGINT, SIGTERM), before Node-RED closes anything: no new step begins,
   * and the steps in progress have the grace to reach their next wait or end and be saved.
   */
  async beforeStop(): Promise<void> {
    const { active, red } = this.parts;
    if (this.graceMs === 0) return;
    this.holdingSteps = true;
    try {
      const inStep = active.all();
      if (!inStep.length) return;
      const said = { count: inStep.length, seconds: this.graceMs / 1000 };
      red.log.info(`[channel-sessions] ${runtimeText(red, 'core', 'runtime.log.stopWaiting', said)}`);
      let timer: NodeJS.Timeout | undefined;
      const graceOver = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, this.graceMs);
      });
      await Promise.race([Promise.all(inStep.map((session) => active.whenOver(session))), graceOver]);
      clearTimeout(timer);
      // Not saved by now (still running, or its commit not through): it runs again after the start.
      const left = active.all();
      if (left.length) this.sayCut(left);
    } finally {
      this.holdingSteps = false;
      // Node-RED's stop follows at once (the signal's own listeners run next, in this turn).
      this.stopDrained = true;
      setImmediate(() => {
        this.stopDrained = false;
      });
    }
  }

  /** The grace is over: the steps from before the stop still running on stopped nodes are cut. */
  private cut(deploys: number, draining: Set<number>, stopped: StoppedNodes, say: boolean): void {
    const { active } = this.parts;
    const onStopped = (step: number) => stopped === 'all' || holdsStopped(this.parts.nodesHolding(step), stopped);
    const cut = active.abandonOlderThan(deploys, (step) => !draining.has(step) && !onStopped(step));
    if (!cut.length) return;
    // What waits for the flows of a step that is cut goes nowhere: the step runs again.
    this.parked = this.parked.filter((p) => {
      const session = active.inStep(p.step);
      return session !== undefined && !active.isAbandoned(session);
    });
    if (say) this.sayCut(cut);
  }

  private sayCut(sessions: SessionRecord[], key = 'runtime.log.stepsCut'): void {
    const { red } = this.parts;
    const ids = sessions.map((session) => session.id);
    const shown = ids.length > 20 ? `${ids.slice(0, 20).join(', ')} …` : ids.join(', ');
    const said = { count: ids.length, seconds: this.graceMs / 1000, sessions: shown };
    red.log.warn(`[channel-sessions] ${runtimeText(red, 'core', key, said)}`);
  }

  /** Node-RED's `preRoute`: a token of a step from before the flows stopped is routed here (false: not by Node-RED). */
  private route(event: HookEvent): false | undefined {
    const { active, tracker } = this.parts;
    const destination = event.destination?.id;
    if (!destination) return undefined;
    const step = active.tokenFromBefore(event.msg, this.parts.deploys());
    if (step === undefined) return undefined;
    const clone = event.cloneMessage === true;
    if (!this.parts.flowsRunning()) {
      // Beyond the bound, Node-RED drops it as it would have: its step is cut when the grace is over.
      if (this.parked.length >= MAX_PARKED) return undefined;
      tracker.hold(step); // the token still moves: its step must not look stopped meanwhile
      this.parked.push({ step, destination, msg: event.msg, clone });
      return false;
    }
    if (this.deliver(step, destination, event.msg, clone, true)) return false;
    this.cutLost(step);
    return undefined;
  }

  /**
   * Hands a token to the running node of that id, as Node-RED's router would (cloned when it
   * would clone, in a later turn). A parked token is already held; a fresh one is held until the
   * node has it. False when no such node runs.
   */
  private deliver(step: number, destination: string, msg: unknown, clone: boolean, hold = false): boolean {
    const { red, tracker } = this.parts;
    const node = red.nodes.getNode(destination) as { receive?: (msg: unknown) => void } | undefined;
    if (typeof node?.receive !== 'function') return false;
    const copy = clone ? red.util.cloneMessage(msg) : msg;
    if (hold) tracker.hold(step);
    setImmediate(() => {
      try {
        node.receive?.(copy);
      } catch (err) {
        red.log.error(`[channel-sessions] ${runtimeText(red, 'core', 'runtime.log.deliverFailed', { node: destination, message: (err as Error).message })}`);
      } finally {
        tracker.release(step);
      }
    });
    return true;
  }
}

/** A settings.js value as the warning shows it. */
function shown(value: unknown): string {
  try {
    return JSON.stringify(value) ?? typeof value;
  } catch {
    return typeof value;
  }
}
