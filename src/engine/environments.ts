import type { ContextLike, RED } from '../model/red';
import { coreSay, runtimeText } from '../model/texts';
import { StoreChooser } from '../stores/choose-store';
import { MemoryStore } from '../stores/memory/memory-store';
import { StoreUnavailable, type SessionStore } from '../stores/session-store';
import type { EnvironmentNote } from './start-status';

/** An Environment config node, as the engine sees it. */
export interface EnvironmentAttachment {
  id: string;
  name: string;
  /** Which module it belongs to; the shared Start names Environments by this key. */
  moduleKey: string;
  sessionStore?: string;
  maxSessions: number;
  context: ContextLike;
}

export interface EnvironmentState {
  attachment: EnvironmentAttachment;
  store: SessionStore;
  ready: Promise<void>;
  /** What a crash loses with this store (none for a durable one), said at every deploy. */
  warning?: string;
  /**
   * A deploy removed its config node. Its state stays (a Session of it may still be in a store the
   * sweeps read, and a deploy may bring it back), but it no longer counts for the operator.
   */
  removed?: boolean;
}

export interface EnvironmentsListener {
  /** The Environment's note on its starts (a store that cannot be opened), or none. */
  note(environmentId: string, note: EnvironmentNote | undefined): void;
  /** An in-process store copied its Sessions back from the context store. */
  restored(state: EnvironmentState, count: number): Promise<void>;
}

/**
 * The deployed Environments and the Session store each uses, plus the test chat's own store. A
 * redeployed Environment keeps its store when its store setting is unchanged.
 */
export class Environments {
  readonly chooser: StoreChooser;
  private readonly byId = new Map<string, EnvironmentState>();
  /** The Test chat's Sessions: durable like any other (choose-store.ts), opened at the first test, or at boot when kept from before. */
  private testStoreOpened: SessionStore | undefined;

  constructor(
    private readonly red: RED,
    private readonly listener: EnvironmentsListener,
  ) {
    this.chooser = new StoreChooser(red);
    this.testStoreOpened = this.chooser.testStore(true);
  }

  get testStore(): SessionStore {
    this.testStoreOpened ??= this.chooser.testStore();
    return this.testStoreOpened!;
  }

  /** The Test chat's store when it is open (the workers and sweeps need not open it). */
  get openTestStore(): SessionStore | undefined {
    return this.testStoreOpened;
  }

  attach(attachment: EnvironmentAttachment): void {
    this.listener.note(attachment.id, undefined);
    const existing = this.byId.get(attachment.id);
    if (existing && existing.attachment.sessionStore === attachment.sessionStore) {
      existing.attachment = attachment;
      existing.removed = false;
      if (existing.store instanceof MemoryStore)
        existing.store.rebind({ context: attachment.context, storeName: attachment.sessionStore ?? '', log: this.red.log, say: coreSay(this.red) });
      this.warnAtDeploy(attachment, existing.warning);
      return;
    }
    let state: EnvironmentState;
    try {
      const choice = this.chooser.choose(attachment.sessionStore || undefined, { context: attachment.context });
      state = { attachment, store: choice.store, ready: Promise.resolve(), warning: choice.warning };
      this.warnAtDeploy(attachment, choice.warning);
    } catch (err) {
      // The store cannot even be opened: the Environment refuses webhooks (503) instead of losing them.
      const reason = runtimeText(this.red, 'core', 'runtime.log.storeNotOpened', { message: (err as Error).message });
      this.red.log.error(
        `[channel-sessions] ${runtimeText(this.red, 'core', 'runtime.log.environment', { name: attachment.name || attachment.id, text: reason })}`,
      );
      const store = new MemoryStore('unavailable');
      state = { attachment, store, ready: Promise.reject(new StoreUnavailable(reason)) };
      state.ready.catch(() => undefined);
      this.listener.note(attachment.id, { fill: 'red', text: runtimeText(this.red, 'core', 'runtime.status.storeUnavailable') });
    }
    if (state.store instanceof MemoryStore) state.ready = state.store.restored.then((n) => this.listener.restored(state, n));
    this.byId.set(attachment.id, state);
  }

  /** A deploy removed the Environment's config node (attach brings it back). */
  remove(id: string): void {
    const state = this.byId.get(id);
    if (state) state.removed = true;
  }

  /** The Environments the deployed flows have: those no deploy removed since they were attached. */
  deployed(): EnvironmentState[] {
    return this.all().filter((e) => !e.removed);
  }

  get(id: string): EnvironmentState | undefined {
    return this.byId.get(id);
  }

  all(): EnvironmentState[] {
    return [...this.byId.values()];
  }

  name(id: string): string {
    return this.byId.get(id)?.attachment.name || id;
  }

  /**
   * Every store in use: the test chat's (once open) and each Environment's, once each. `deployed`:
   * only the deployed Environments' (what the operator's health and metrics read); the sweeps read
   * every one, a removed Environment's Sessions included.
   */
  stores(which: 'all' | 'deployed' = 'all'): SessionStore[] {
    const stores = new Set<SessionStore>(this.testStoreOpened ? [this.testStoreOpened] : []);
    for (const env of which === 'deployed' ? this.deployed() : this.all()) stores.add(env.store);
    return [...stores];
  }

  private warnAtDeploy(attachment: EnvironmentAttachment, warning: string | undefined): void {
    if (warning)
      this.red.log.warn(
        `[channel-sessions] ${runtimeText(this.red, 'core', 'runtime.log.environment', { name: attachment.name || attachment.id, text: warning })}`,
      );
  }
}
