/**
 * Remembers what was already handled, for a while and within a bound: providers deliver a webhook
 * again when they think it was lost (Slack retries, Twilio redelivery). The oldest keys go first.
 */
export class RecentKeys {
  private readonly expiresAt = new Map<string, number>();

  constructor(private readonly ttlMs = Number.POSITIVE_INFINITY, private readonly max = 10000) {}

  /** True when the key was seen within its time to live; otherwise remembers it and says false. */
  seen(key: string, ttlMs = this.ttlMs): boolean {
    const now = Date.now();
    const expires = this.expiresAt.get(key);
    if (expires !== undefined && now <= expires) return true;
    this.expiresAt.delete(key);
    this.expiresAt.set(key, now + ttlMs);
    if (this.expiresAt.size > this.max) {
      const oldest = this.expiresAt.keys().next().value;
      if (oldest !== undefined) this.expiresAt.delete(oldest);
    }
    return false;
  }
}
