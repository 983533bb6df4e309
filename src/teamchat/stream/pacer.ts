/** Tier 4 (`chat.appendStream`): about 100 calls a minute per app and workspace, shared by all its streams. */
export const APPEND_INTERVAL_MS = 600;

/** Calls waiting for their turn at once (a bound: past it a caller goes at once rather than queue without end). */
export const MAX_WAITING = 1000;

/**
 * Spaces the stream calls of one app in one workspace (pacers.ts: whichever Environment and answer
 * makes them): Slack counts a method's calls per app per workspace, so twenty answers streaming at
 * once share one budget. Each caller waits for its turn; the parts of an answer that arrive
 * meanwhile go out together in its next call (stream-reply.ts), so an answer written faster than
 * the pace is sent in fewer, larger appends.
 */
export class Pacer {
  private next = 0;
  private waiting = 0;

  constructor(private readonly intervalMs: number) {}

  async turn(): Promise<void> {
    const now = Date.now();
    const at = Math.max(now, this.next);
    this.next = at + this.intervalMs;
    if (at <= now || this.waiting >= MAX_WAITING) return;
    this.waiting++;
    try {
      await new Promise((resolve) => setTimeout(resolve, at - now));
    } finally {
      this.waiting--;
    }
  }
}
