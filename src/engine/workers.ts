import type { RED } from '../model/red';
import { runtimeText } from '../model/texts';
import type { Claimed, InboundItem, Lease, SessionStore } from '../stores/session-store';
import { ConversationWorker, type ItemResult, type ReleaseIfLast } from './conversation-worker';

/**
 * How long a conversation stays with an instance that stopped renewing its lease (it died): its
 * items are taken over by another instance once it runs out. Steps renew it while they run, so a
 * slow step keeps it however long it takes.
 */
const LEASE_MS = 5_000;

export interface StepRunner {
  /** Whether steps on this store may run now (the test chat's run while the flows restart). */
  mayRun(store: SessionStore): boolean;
  handle(store: SessionStore, item: InboundItem, lease: Lease, releaseIfLast: ReleaseIfLast, live?: Claimed['live']): Promise<ItemResult>;
}

/** One conversation worker per Session store, made at its first use. */
export class Workers {
  readonly leaseMs = LEASE_MS;
  private readonly byStore = new Map<SessionStore, ConversationWorker>();

  constructor(
    private readonly red: RED,
    private readonly runner: StepRunner,
  ) {}

  of(store: SessionStore): ConversationWorker {
    let worker = this.byStore.get(store);
    if (!worker) {
      worker = new ConversationWorker({
        store,
        leaseMs: LEASE_MS,
        mayRun: () => this.runner.mayRun(store),
        handle: (item, lease, releaseIfLast, live) => this.runner.handle(store, item, lease, releaseIfLast, live),
        onError: (err, ref) =>
          this.red.log.error(
            `[channel-sessions] ${runtimeText(this.red, 'core', 'runtime.log.conversationFailed', { conversation: ref.conversation, message: (err as Error).message })}`,
          ),
      });
      this.byStore.set(store, worker);
    }
    return worker;
  }
}
