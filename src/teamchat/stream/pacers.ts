import { Pacer } from './pacer';

/** Apps × workspaces one runtime keeps a pace for at once (a bound: past it the least recently used goes). */
export const MAX_PACERS = 1000;

/**
 * The paces of one runtime, one per app per workspace: Slack counts `chat.appendStream` per app
 * and workspace, so two Environments with the same app in one workspace (the same Bot Token, or
 * two Environments a flow author made for one app) share one budget, while another workspace,
 * or another app, has its own.
 */
export class StreamPacers {
  private readonly pacers = new Map<string, Pacer>();

  constructor(private readonly intervalMs: number) {}

  /** The pace of the app and workspace `key` names (see TeamChatEnvironment.appKey). */
  of(key: string): Pacer {
    let pacer = this.pacers.get(key);
    if (pacer) this.pacers.delete(key);
    else pacer = new Pacer(this.intervalMs);
    this.pacers.set(key, pacer);
    while (this.pacers.size > MAX_PACERS) this.pacers.delete(this.pacers.keys().next().value as string);
    return pacer;
  }

  get size(): number {
    return this.pacers.size;
  }
}
