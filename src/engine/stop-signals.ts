/** What waits for its steps before the runtime stops (a DeployDrain). */
export interface StopDrain {
  beforeStop(): Promise<void>;
}

type Signal = 'SIGINT' | 'SIGTERM';
type Listener = (...args: unknown[]) => void;

interface SignalState {
  drains: Set<WeakRef<StopDrain>>;
  /** The host's listeners (red.js's), run once the steps had their grace. */
  theirs: Record<Signal, Listener[]>;
  ours: Partial<Record<Signal, Listener>>;
  stopping: boolean;
}

const SIGNALS: Signal[] = ['SIGINT', 'SIGTERM'];
/** Shared by every runtime and copy of the package in the process, as the signals are. */
const STATE = Symbol.for('@channel-sessions/node-red:stop-signals');

/**
 * The runtime stops on SIGINT or SIGTERM (red.js calls RED.stop() from its listeners, which closes
 * every node in one pass), and Node-RED offers no hook before it: once the nodes are closed a step
 * in progress cannot reach its next wait (see deploy-drain.ts). So the listeners the host put on
 * these signals are moved behind one of ours: at the signal each runtime's steps in progress get
 * their grace while the flows still run, then the host's listeners run and Node-RED stops. A
 * second signal stops at once. Where nobody listens (Node.js's default, exit), nothing changes.
 *
 * The state lives on `process`, not in this module: signals are the process's, and two runtimes
 * (or two copies of the package) in one process share one listener. Called again at each start
 * of the flows, it also takes listeners added since.
 */
export function drainBeforeStop(drain: StopDrain): void {
  const state = stateOfProcess();
  let known = false;
  for (const ref of state.drains) {
    const held = ref.deref();
    if (!held) state.drains.delete(ref);
    else if (held === drain) known = true;
  }
  if (!known) state.drains.add(new WeakRef(drain));
  for (const signal of SIGNALS) takeListeners(state, signal);
}

function stateOfProcess(): SignalState {
  const holder = process as unknown as Record<symbol, SignalState | undefined>;
  let state = holder[STATE];
  if (!state) {
    state = { drains: new Set(), theirs: { SIGINT: [], SIGTERM: [] }, ours: {}, stopping: false };
    holder[STATE] = state;
  }
  return state;
}

function takeListeners(state: SignalState, signal: Signal): void {
  const ours = state.ours[signal];
  const theirs = (process.listeners(signal) as Listener[]).filter((listener) => listener !== ours);
  if (!theirs.length) return;
  for (const listener of theirs) {
    process.removeListener(signal, listener);
    state.theirs[signal].push(listener);
  }
  if (ours) return;
  const listener: Listener = () => void stopAfterDrain(state, signal);
  state.ours[signal] = listener;
  process.on(signal, listener);
}

async function stopAfterDrain(state: SignalState, signal: Signal): Promise<void> {
  if (!state.stopping) {
    state.stopping = true;
    const drains = [...state.drains].map((ref) => ref.deref()).filter((drain): drain is StopDrain => drain !== undefined);
    await Promise.all(drains.map((drain) => drain.beforeStop().catch(() => undefined)));
  }
  for (const listener of state.theirs[signal]) listener.call(process, signal);
}
