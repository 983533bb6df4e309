/**
 * Remembers what was already handled for a while: Slack retries an event it thinks was lost, and
 * delivers a channel message that mentions the app twice (as `app_mention` and as `message`).
 */
export class RecentKeys {
  private readonly seen = new Map<string, number>();

  constructor(private readonly ttlMs: number, private readonly max = 10000) {}

  has(key: string): boolean {
    const at = this.seen.get(key);
    if (at === undefined) return false;
    if (Date.now() - at > this.ttlMs) {
      this.seen.delete(key);
      return false;
    }
    return true;
  }

  add(key: string): void {
    this.seen.set(key, Date.now());
    if (this.seen.size > this.max) {
      const oldest = this.seen.keys().next().value;
      if (oldest !== undefined) this.seen.delete(oldest);
    }
  }
}

/**
 * The copies of one message (same channel and ts) are handled once: a copy waits for the one
 * in progress, and only goes on when that one did nothing (say the `message` copy of a mention
 * arrived first and its kind may not start a Session, while the `app_mention` copy may).
 */
export class OncePerMessage {
  private readonly claims = new Map<string, { at: number; done: Promise<boolean> }>();

  constructor(private readonly ttlMs: number) {}

  /** Runs `handle` unless another copy of the message was handled; `handle` says whether it acted. */
  async run(key: string, handle: () => Promise<boolean>): Promise<boolean> {
    this.sweep();
    const previous = this.claims.get(key);
    if (previous && (await previous.done.catch(() => true))) return false;
    const current = this.claims.get(key);
    if (current && current !== previous) return this.run(key, handle);
    const done = handle();
    this.claims.set(key, { at: Date.now(), done });
    return done;
  }

  private sweep(): void {
    const now = Date.now();
    for (const [key, claim] of this.claims) {
      if (now - claim.at > this.ttlMs) this.claims.delete(key);
      else break;
    }
  }
}
