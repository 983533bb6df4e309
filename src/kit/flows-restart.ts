import type { RED } from '../model/red';

/** How long a webhook waits for restarting flows before it is answered as it would be without them. */
export const RESTART_WAIT_MS = 10_000;
/** At most this many requests wait at once; more are looked up at once (bounded memory under a flood). */
export const MAX_WAITING = 10_000;

type Events = RED['events'];

/**
 * Whether a runtime's flows are restarting: from `flows:stopping` (a full or modified deploy, or
 * the boot before the first start) to `flows:started`. In between, the Environment config nodes
 * are closed and their tokens unknown, so a webhook that looked its Environment up then would be
 * answered 404 and lost (Twilio does not retry an SMS webhook). `settled()` lets it wait instead.
 *
 * It stops waiting without a `flows:started` when the runtime says the flows will not start
 * (stopped through the admin API, missing node types or modules, safe mode), and after a wait runs
 * out: a restart that takes longer than RESTART_WAIT_MS is stuck (or was never one: the package was
 * installed while flows ran), and holding further requests would only delay their answer.
 */
export class FlowsRestart {
  private static readonly byRuntime = new WeakMap<Events, FlowsRestart>();
  private restart: { started: Promise<void>; end: () => void } | undefined;
  private waiting = 0;

  /**
   * The one per runtime, made when a module registers: that is before the flows first start, so
   * requests that come in while Node-RED boots wait for them too.
   */
  static register(red: RED): FlowsRestart {
    return FlowsRestart.find(red, true);
  }

  /** The one per runtime; when no module registered it (a bare engine), flows count as running. */
  static of(red: RED): FlowsRestart {
    return FlowsRestart.find(red, false);
  }

  private static find(red: RED, beforeStart: boolean): FlowsRestart {
    let gate = FlowsRestart.byRuntime.get(red.events);
    if (!gate) {
      gate = new FlowsRestart(red.events, beforeStart);
      FlowsRestart.byRuntime.set(red.events, gate);
    }
    return gate;
  }

  private constructor(events: Events, beforeStart: boolean) {
    if (beforeStart) this.begin();
    events.on('flows:stopping', () => this.begin());
    events.on('flows:started', () => this.end());
    events.on('runtime-event', (event: { id?: string; payload?: { state?: string; deploy?: boolean; error?: string } }) => {
      const payload = event?.id === 'runtime-state' ? event.payload : undefined;
      if (!payload) return;
      // Stopped by hand or by shutdown (a deploy's own stop says deploy: true), or cannot start.
      if ((payload.state === 'stop' && !payload.deploy) || payload.error || payload.state === 'safe') this.end();
    });
  }

  get restarting(): boolean {
    return this.restart !== undefined;
  }

  /** Resolves at once when the flows run; else when they have started, or after `maxMs`. */
  settled(maxMs = RESTART_WAIT_MS): Promise<void> | undefined {
    const restart = this.restart;
    if (!restart || this.waiting >= MAX_WAITING) return undefined;
    this.waiting += 1;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        if (this.restart === restart) this.end();
        resolve();
      }, maxMs);
    });
    return Promise.race([restart.started, timedOut]).finally(() => {
      clearTimeout(timer);
      this.waiting -= 1;
    });
  }

  private begin(): void {
    if (this.restart) return;
    let end = () => {};
    const started = new Promise<void>((resolve) => {
      end = resolve;
    });
    this.restart = { started, end };
  }

  private end(): void {
    const restart = this.restart;
    this.restart = undefined;
    restart?.end();
  }
}
