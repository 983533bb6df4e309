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
