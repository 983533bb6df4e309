import type { Claimed, ConversationRef, InboundItem, Lease } from './session-store';

/**
 * Conversation leases for a store that one process owns: the holder keeps the lease until it
 * releases it, so no expiry is needed. Bounded by the conversations being handled right now.
 */
export class LocalLeases {
  private readonly held = new Map<string, Lease>();
  private fence = 0;

  claim(ref: ConversationRef, owner: string): Lease | undefined {
    const key = keyOf(ref);
    if (this.held.has(key)) return undefined;
    const lease = { environment: ref.environment, conversation: ref.conversation, owner, fence: ++this.fence };
    this.held.set(key, lease);
    return lease;
  }

  holds(lease: Lease): boolean {
    return this.held.get(keyOf(lease))?.fence === lease.fence;
  }

  isHeld(ref: ConversationRef): boolean {
    return this.held.has(keyOf(ref));
  }

  release(lease: Lease): void {
    if (this.holds(lease)) this.held.delete(keyOf(lease));
  }
}

function keyOf(ref: ConversationRef): string {
  return `${ref.environment}\u0000${ref.conversation}`;
}

/** The lease calls of a store one process owns (SQLite, memory): they never leave the process. */
export abstract class SingleProcessLeases {
  protected readonly leases = new LocalLeases();

  abstract next(ref: ConversationRef, handOut?: boolean): Promise<InboundItem | undefined>;
  /** Whether an item of the conversation waits, read synchronously (so nothing comes in between). */
  protected abstract hasItem(ref: ConversationRef): boolean;

  async claimNext(ref: ConversationRef, owner: string): Promise<Claimed | undefined> {
    const lease = this.leases.claim(ref, owner);
    if (!lease) return undefined;
    try {
      return { lease, item: await this.next(ref, true) };
    } catch (err) {
      // These leases never expire: one kept here would hold the conversation until a restart.
      this.leases.release(lease);
      throw err;
    }
  }

  async releaseIfIdle(lease: Lease): Promise<boolean> {
    if (this.leases.holds(lease) && this.hasItem(lease)) return false;
    this.leases.release(lease);
    return true;
  }

  async claim(ref: ConversationRef, owner: string): Promise<Lease | undefined> {
    return this.leases.claim(ref, owner);
  }

  async renew(lease: Lease): Promise<boolean> {
    return this.leases.holds(lease);
  }

  async release(lease: Lease): Promise<void> {
    this.leases.release(lease);
  }
}
