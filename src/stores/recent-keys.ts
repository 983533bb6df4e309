/**
 * Remembers what was already handled, for a while and within a bound: providers deliver a webhook
 * again when they think it was lost (Slack retries, Twilio redelivery). The oldest keys go first.
 */
export class RecentKeys {
  private readonly expiresAt = new Map<string, number>();
  /**
   * Keys in the order they were last remembered, each with the expiry it was remembered with (an
   * entry whose key was remembered again since is stale and skipped). The oldest key is found here
   * rather than by `keys().next()`: a Map whose oldest keys were deleted walks past their empty
   * slots on every such call, about 12 µs at 20,000 keys, on every message of a full store.
   */
  private order: Array<{ key: string; expires: number }> = [];
  private head = 0;

  constructor(
    private readonly ttlMs = Number.POSITIVE_INFINITY,
    private readonly max = 10000,
  ) {}

  /** True when the key was seen within its time to live; otherwise remembers it and says false. */
  seen(key: string, ttlMs = this.ttlMs): boolean {
    const now = Date.now();
    const expires = this.expiresAt.get(key);
    if (expires !== undefined && now <= expires) return true;
    const until = now + ttlMs;
    this.expiresAt.delete(key);
    this.expiresAt.set(key, until);
    this.order.push({ key, expires: until });
    while (this.expiresAt.size > this.max) this.dropOldest();
    // Keys remembered again (after they expired) leave stale entries behind: kept within a bound.
    if (this.order.length - this.head > 2 * this.max + 16) this.rebuildOrder();
    return false;
  }

  /** Remembers the key for `ttlMs` from now, whether it was there or not. */
  remember(key: string, ttlMs = this.ttlMs): void {
    this.expiresAt.delete(key);
    this.seen(key, ttlMs);
  }

  /** Whether the key is remembered now; sets nothing. */
  has(key: string): boolean {
    const expires = this.expiresAt.get(key);
    return expires !== undefined && Date.now() <= expires;
  }

  private dropOldest(): void {
    for (;;) {
      const entry = this.order[this.head++];
      if (this.expiresAt.get(entry.key) === entry.expires) {
        this.expiresAt.delete(entry.key);
        break;
      }
    }
    if (this.head > 1024 && this.head * 2 > this.order.length) {
      this.order = this.order.slice(this.head);
      this.head = 0;
    }
  }

  /** The Map keeps its keys in the order they were last set, which is the order wanted. */
  private rebuildOrder(): void {
    this.order = [...this.expiresAt].map(([key, expires]) => ({ key, expires }));
    this.head = 0;
  }
}
