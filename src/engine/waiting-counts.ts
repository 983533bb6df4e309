import type { RedNode } from '../model/red';
import type { SessionStore } from '../stores/session-store';
import type { StartStatus } from './start-status';

/** "N waiting" on the nodes, counted by the stores, at most once a second however busy. */
export class WaitingCounts {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly status: StartStatus,
    private readonly stores: () => SessionStore[],
    private readonly nodeOf: (id: string) => RedNode | undefined,
  ) {}

  changed(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.show();
    }, 500);
    this.timer.unref();
  }

  private async show(): Promise<void> {
    const counts = new Map<string, number>();
    for (const store of this.stores()) {
      for (const [node, n] of await store.waitingByNode().catch(() => new Map<string, number>())) counts.set(node, (counts.get(node) ?? 0) + n);
    }
    this.status.showWaiting(counts, this.nodeOf);
  }
}
