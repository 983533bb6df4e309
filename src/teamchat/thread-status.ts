/** Slack drops a thread's status after 2 minutes without a message; it is set again well before. */
export const STATUS_REFRESH_S = 90;

/** Statuses one Environment keeps up at once (a bound, not a limit a workspace should meet); past it the oldest stops. */
export const MAX_STATUSES = 2000;

/** `assistant.threads.setStatus`'s arguments. */
export interface StatusArguments {
  channel_id: string;
  thread_ts: string;
  status: string;
  loading_messages?: string[];
}

/**
 * The statuses ("is thinking…") an Environment shows in its threads, kept up while they stand: set
 * again every `refreshMs`, since Slack removes one after 2 minutes with no message. A status
 * stands until the next message the app posts in the thread (Slack clears it then), an empty
 * status, the end of its Session, or a redeploy; each ends its timer here.
 */
export class ThreadStatuses {
  private readonly kept = new Map<string, NodeJS.Timeout>();

  constructor(
    private readonly setStatus: (args: StatusArguments) => Promise<unknown>,
    private readonly refreshMs: number,
    private readonly failed: (err: unknown) => void,
  ) {}

  /** Sets the status now (rejects as Slack refused it) and keeps it up; an empty status clears it. */
  async show(args: StatusArguments): Promise<void> {
    this.stop(args.channel_id, args.thread_ts);
    await this.setStatus(args);
    if (!args.status) return;
    const key = keyOf(args.channel_id, args.thread_ts);
    const timer = setInterval(() => {
      this.setStatus(args).catch((err: unknown) => {
        // Refused now (the thread is gone, the token revoked): no use asking again every time.
        this.stop(args.channel_id, args.thread_ts);
        this.failed(err);
      });
    }, this.refreshMs);
    // A kept status never holds Node-RED open on its way out.
    timer.unref();
    this.kept.set(key, timer);
    while (this.kept.size > MAX_STATUSES) this.stopKey(this.kept.keys().next().value as string);
  }

  /** The app posted in the conversation: Slack cleared the status of that thread (or of the channel's, with no thread named). */
  posted(channel: string, threadTs?: string): void {
    if (threadTs) return this.stop(channel, threadTs);
    for (const key of [...this.kept.keys()]) if (key.startsWith(`${channel}\n`)) this.stopKey(key);
  }

  stop(channel: string, threadTs: string): void {
    this.stopKey(keyOf(channel, threadTs));
  }

  /** The Environment is redeployed or stopped: no status is kept up past it. */
  stopAll(): void {
    for (const key of [...this.kept.keys()]) this.stopKey(key);
  }

  get size(): number {
    return this.kept.size;
  }

  private stopKey(key: string): void {
    const timer = this.kept.get(key);
    if (!timer) return;
    clearInterval(timer);
    this.kept.delete(key);
  }
}

function keyOf(channel: string, threadTs: string): string {
  return `${channel}\n${threadTs}`;
}
