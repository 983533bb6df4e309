import type { SessionRecord } from '../../model/session';
import type { SlackAnswer } from './slack-answer';

/** Answers being gathered at once in one runtime (a bound: past it the oldest is dropped). */
export const MAX_GATHERINGS = 5000;

/** One Session's answer at one Stream reply while its parts come in. */
export interface Gathering {
  nodeId: string;
  /** Everything the parts said so far. */
  text: string;
  /** What Slack has not been sent yet: parts that came while a call was waiting for its turn go out together. */
  unsent: string;
  /** The Slack side, for a Session in Slack (not a test one), and its Environment. */
  slack?: SlackAnswer;
  environment?: string;
  /** The last part has come: what was not sent yet waits for the answer's stop. */
  finishing?: boolean;
  /** The first failure, reported at the last part (output 2). */
  failure?: Error;
  /** The parts' work, one after the other. */
  chain: Promise<void>;
}

/**
 * The answers Stream reply nodes are gathering in one runtime, by Session and node id (not node
 * instance): a deploy that re-creates the node hands them to the new one, whose parts (routed to
 * the node of the same id, deploy-drain.ts) go on in the same Slack message. Dropped at the
 * answer's last part; stopped with what they have when their Session ends or their node is removed.
 */
export class Gatherings {
  private readonly open = new Map<string, Gathering>();

  get(session: SessionRecord, nodeId: string): Gathering {
    const key = keyOf(session.id, nodeId);
    let gathering = this.open.get(key);
    if (!gathering) {
      gathering = { nodeId, text: '', unsent: '', chain: Promise.resolve() };
      this.open.set(key, gathering);
      while (this.open.size > MAX_GATHERINGS) this.open.delete(this.open.keys().next().value as string);
    }
    return gathering;
  }

  finished(session: SessionRecord, nodeId: string): void {
    this.open.delete(keyOf(session.id, nodeId));
  }

  sessionEnded(sessionId: string): void {
    for (const [key, gathering] of [...this.open]) if (key.startsWith(`${sessionId}\n`)) this.stop(key, gathering);
  }

  /**
   * The node closes. Re-created by the deploy (`removed` false), its answers wait for the new
   * node of the same id; removed from the flows, no part will reach them again.
   */
  nodeClosed(nodeId: string, removed: boolean): void {
    if (!removed) return;
    for (const [key, gathering] of [...this.open]) if (gathering.nodeId === nodeId) this.stop(key, gathering);
  }

  /** An answer that will not finish: its open stream is stopped with what it has, not left spinning until Slack seals it. */
  private stop(key: string, gathering: Gathering): void {
    this.open.delete(key);
    if (gathering.finishing) return;
    // The appends already on their way go out first; parts that come later are not sent.
    gathering.finishing = true;
    void gathering.chain.then(() => gathering.slack?.abandon());
  }

  /** The person stopped their agent session in Slack: the answers streaming in that thread (or in the streams Slack stopped) send no more. */
  stoppedInSlack(environment: string, channel: string, threadTs: string, streams: string[]): number {
    let stopped = 0;
    for (const gathering of this.open.values()) {
      if (gathering.environment !== environment || !gathering.slack?.isIn(channel, threadTs, streams)) continue;
      gathering.slack.stoppedByPerson();
      stopped++;
    }
    return stopped;
  }

  get size(): number {
    return this.open.size;
  }
}

function keyOf(sessionId: string, nodeId: string): string {
  return `${sessionId}\n${nodeId}`;
}
