import { forgetFilesOfGoneSessions } from '../files/gone-sessions';
import type { FileStore } from '../files/file-store';
import type { RED } from '../model/red';
import type { SessionRecord } from '../model/session';
import type { SessionStore, SessionTimer } from '../stores/session-store';
import type { ActiveSessions } from './active-sessions';
import type { Environments, EnvironmentState } from './environments';
import type { ItemWaiters } from './item-waiters';
import { END } from './item-kinds';
import type { StartStatus } from './start-status';
import type { StoreHealth } from './store-health';
import type { Workers } from './workers';
import { nodeRemoved } from './token-lifecycle';
import { runtimeText } from '../model/texts';
import { nodesStoppedBy } from './deploy-cut';
import { DeployDrain } from './deploy-drain';
import { drainBeforeStop } from './stop-signals';
import type { TokenTracker } from './token-tracker';

/** How long an item in a shared store waits for the instance that recorded it before another takes it. */
const ORPHAN_AFTER_MS = 3_000;
/**
 * How often a shared store is asked for conversations no live instance holds (one small script),
 * whatever the sweep interval: a dead instance's conversations are taken over within a few seconds
 * of its lease running out.
 */
const ORPHAN_LOOK_MS = 1_000;
/** How often received files of Sessions no store knows are looked for (also at the first start). */
const GONE_FILES_EVERY_MS = 60 * 60 * 1000;

export interface RecoveryParts {
  red: RED;
  /** Seconds between sweeps (at most 5). */
  sweepInterval?: number;
  files: FileStore;
  environments: Environments;
  workers: Workers;
  waiters: ItemWaiters;
  health: StoreHealth;
  active: ActiveSessions;
  status: StartStatus;
  tracker: TokenTracker;
  timersOf(session: SessionRecord): SessionTimer[];
  /** The nodes holding a step's token now. */
  nodesHolding(step: number): Iterable<string>;
  /** Ends the Sessions whose step has run longer than their idle timeout. */
  endOverdueSteps(): void;
  /** After a deploy: the starts show what they serve and the waiting nodes their counts. */
  deployed(): void;
}

/**
 * What keeps Sessions going across time, deploys and restarts: the sweep that turns due timers
 * into items and takes up conversations left with unhandled items, the flows' stop and start (a
 * step in progress on stopping nodes gets a grace, deploy-drain.ts; one cut runs again), Sessions
 * waiting at nodes a deploy removed, the timers of Sessions copied back from a context store, and
 * received files no store knows any more.
 */
export class Recovery {
  private running = false;
  private deployCount = 0;
  private wake: { at: number; timer: NodeJS.Timeout } | undefined;
  private goneFilesAt = 0;
  private looking = false;
  private readonly drain: DeployDrain;

  constructor(private readonly parts: RecoveryParts) {
    const { red } = parts;
    this.drain = new DeployDrain({
      red,
      active: parts.active,
      tracker: parts.tracker,
      flowsRunning: () => this.running,
      deploys: () => this.deployCount,
      nodesHolding: (step) => parts.nodesHolding(step),
    });
    red.events.on('flows:stopping', (event: Parameters<typeof nodesStoppedBy>[0]) => {
      this.running = false;
      this.deployCount++;
      parts.active.deployBegan();
      this.drain.flowsStopping(this.deployCount, nodesStoppedBy(event));
    });
    red.events.on('flows:started', () => this.afterDeploy());
    drainBeforeStop(this.drain);
    const every = Math.max(0.05, Math.min(parts.sweepInterval ?? 5, 5)) * 1000;
    setInterval(() => void this.sweep(), every).unref();
    if (every > ORPHAN_LOOK_MS) setInterval(() => void this.lookForOrphans(), ORPHAN_LOOK_MS).unref();
  }

  /** Whether the flows run (steps wait while they restart). */
  get flowsRunning(): boolean {
    return this.running;
  }

  /** Whether a step may begin: the flows run, and the runtime is not waiting for its steps to stop. */
  get stepsMayBegin(): boolean {
    return this.running && !this.drain.holding;
  }

  /** How many times the flows stopped (deploys and stops) in this runtime. */
  get deploys(): number {
    return this.deployCount;
  }

  /** One wake-up for the earliest timer this process armed; the sweep catches the rest. */
  wakeAt(due: number): void {
    if (!Number.isFinite(due)) return;
    if (this.wake && this.wake.at <= due) return;
    if (this.wake) clearTimeout(this.wake.timer);
    const timer = setTimeout(
      () => {
        this.wake = undefined;
        void this.sweep();
      },
      Math.max(0, due - Date.now()) + 5,
    );
    timer.unref();
    this.wake = { at: due, timer };
  }

  /** Due timers become items of their conversations; conversations with unhandled items are handled. */
  async sweep(): Promise<void> {
    if (!this.running) return;
    const { environments, workers, waiters, health } = this.parts;
    if (Date.now() - this.goneFilesAt >= GONE_FILES_EVERY_MS) void this.forgetGoneSessionFiles();
    await waiters.sweep(2000);
    this.parts.endOverdueSteps();
    for (const store of environments.stores()) {
      const worker = workers.of(store);
      try {
        if (!(await health.writable(store))) continue;
        for (const ref of await store.takeDueTimers(Date.now(), 500)) worker.kick(ref);
        await this.takeOrphans(store);
      } catch (err) {
        health.failed(store, err);
      }
    }
  }

  /** Between sweeps: the shared stores' conversations left by an instance that died. */
  private async lookForOrphans(): Promise<void> {
    if (!this.running || this.looking) return;
    this.looking = true;
    try {
      for (const store of this.parts.environments.stores()) {
        if (!store.shared || this.parts.health.faulty(store)) continue;
        await this.takeOrphans(store).catch((err: unknown) => this.parts.health.failed(store, err));
      }
    } finally {
      this.looking = false;
    }
  }

  /** Conversations with items and no live lease are handled here. */
  private async takeOrphans(store: SessionStore): Promise<void> {
    const worker = this.parts.workers.of(store);
    for (const ref of await store.orphans(200, worker.owner)) {
      // A message another instance recorded a moment ago is about to be handled there (its
      // waiting route answers with the outcome); only one left alone for a while is taken over.
      if (store.shared && Date.now() - ((await store.next(ref))?.at ?? 0) < ORPHAN_AFTER_MS) continue;
      worker.kick(ref);
    }
  }

  /** Sessions an in-process store copied back from its context store get their timers again. */
  async restored(env: EnvironmentState, count: number): Promise<void> {
    if (!count) return;
    const said = { name: env.attachment.name, count, store: env.attachment.sessionStore };
    this.parts.red.log.info(`[channel-sessions] ${runtimeText(this.parts.red, 'core', 'runtime.log.restored', said)}`);
    // A copied-back Session has no timers yet: give each its expiry (and timeout) again.
    const worker = this.parts.workers.of(env.store);
    for (const session of await env.store.list({ environment: env.attachment.id, limit: Number.MAX_SAFE_INTEGER })) {
      const lease = await env.store.claim({ environment: session.environment, conversation: session.key }, worker.owner, this.parts.workers.leaseMs);
      if (!lease) continue;
      await env.store.commit({ lease, session, timers: this.parts.timersOf(session) }).catch(() => undefined);
      await env.store.release(lease);
    }
  }

  private afterDeploy(): void {
    const ids = this.parts.status.readFlows();
    this.running = true;
    // The tokens of steps from before the stop go on in the new flows; listeners on the stop
    // signals added since the last start are taken too.
    this.drain.flowsStarted();
    drainBeforeStop(this.drain);
    this.parts.deployed();
    void this.endSessionsAtRemovedNodes(ids);
    void this.sweep();
  }

  /** Sessions waiting at a node the deploy removed end now, each as a step of its conversation. */
  private async endSessionsAtRemovedNodes(ids: Set<string>): Promise<void> {
    for (const store of this.parts.environments.stores()) {
      try {
        const gone = [...(await store.waitingByNode()).keys()].filter((id) => !ids.has(id));
        if (!gone.length) continue;
        for (const session of await store.list({ waitingAt: gone, limit: 1000 })) {
          const at = session.waitingAt;
          const reason = nodeRemoved(this.parts.red, session.id, at);
          this.parts.red.log.warn(`[channel-sessions] ${reason}`);
          const ref = { environment: session.environment, conversation: session.key };
          await store.record({ ...ref, kind: END, payload: { sessionId: session.id, reason } });
          this.parts.workers.of(store).kick(ref);
        }
      } catch (err) {
        this.parts.health.failed(store, err);
      }
    }
  }

  private async forgetGoneSessionFiles(): Promise<void> {
    this.goneFilesAt = Date.now();
    const { environments, active, files, red } = this.parts;
    // The durable default too, though no deployed Environment may use it now: its Sessions keep their files.
    const durable = environments.chooser.durableStoreIfAny();
    const stores = new Set<SessionStore>([...environments.stores(), ...environments.chooser.all(), ...(durable ? [durable] : [])]);
    const known = async (id: string): Promise<boolean> => {
      if (active.get(id)) return true;
      for (const store of stores) {
        try {
          if (await store.sessionById(id)) return true;
        } catch {
          return true; // a store that cannot say keeps the files
        }
      }
      return false;
    };
    try {
      const removed = await forgetFilesOfGoneSessions(files, known);
      if (removed) red.log.info(`[channel-sessions] ${runtimeText(red, 'core', 'runtime.log.goneFilesRemoved', { removed })}`);
    } catch (err) {
      red.log.warn(`[channel-sessions] ${runtimeText(red, 'core', 'runtime.log.goneFilesFailed', { message: (err as Error).message })}`);
    }
  }
}
