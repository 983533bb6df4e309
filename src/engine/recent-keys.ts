/**
 * Remembers what was already handled, for a while and within a bound: providers deliver a webhook
 * again when they think it was lost (Slack retries, Twilio redelivery). The oldest keys go first.
 */
export class RecentKeys {
  private readonly seenAt = new Map<string, number>();

  constructor(private readonly ttlMs = Number.POSITIVE_INFINITY, private readonly max = 10000) {}

  /** True when the key was seen within the time to live; otherwise remembers it and says false. */
  seen(key: string): boolean {
    const at = this.seenAt.get(key);
    if (at !== undefined && Date.now() - at <= this.ttlMs) return true;
    this.seenAt.delete(key);
    this.seenAt.set(key, Date.now());
    if (this.seenAt.size > this.max) {
      const oldest = this.seenAt.keys().next().value;
      if (oldest !== undefined) this.seenAt.delete(oldest);
    }
    return false;
  }
}
