/**
 * The provider retries a webhook it got no answer to, with the same `I-Twilio-Idempotency-Token`.
 * A retried Gather or Record callback must not advance the dialog twice: the retry gets the answer
 * of the first request (waiting for it if it is still being built).
 */
export class RetriedWebhooks {
  private readonly answers = new Map<string, { twiml: Promise<string>; at: number }>();

  constructor(
    private readonly keepMs = 5 * 60 * 1000,
    private readonly max = 2000,
  ) {}

  /** The answer for this token: the earlier one for a retry, else the one `build` makes now. */
  answer(token: string | undefined, build: () => Promise<string>): Promise<string> {
    if (!token) return build();
    this.sweep();
    const earlier = this.answers.get(token);
    if (earlier) return earlier.twiml;
    const twiml = build();
    this.answers.set(token, { twiml, at: Date.now() });
    twiml.catch(() => this.answers.delete(token));
    return twiml;
  }

  private sweep(): void {
    const oldest = Date.now() - this.keepMs;
    for (const [token, entry] of this.answers) {
      if (entry.at >= oldest && this.answers.size <= this.max) break;
      this.answers.delete(token);
    }
  }
}
