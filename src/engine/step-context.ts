import type { ActiveSessions } from './active-sessions';
import type { ChannelName } from '../model/channels';
import type { FileStore } from '../files/file-store';
import type { ItemWaiters } from './item-waiters';
import type { Journal } from './journal';
import type { Effects } from './effects';
import type { RED } from '../model/red';
import type { Registry, WaitingNode } from './registry';
import type { SessionRecord, SessionStory } from '../model/session';
import type { StoreHealth } from './store-health';
import type { Metrics } from './metrics';
import type { TokenTracker } from './token-tracker';

/** An Environment as the steps need it. */
export interface StepEnvironment {
  attachment: { id: string; name: string; maxSessions: number };
}

/** What a step (running it, opening its Session, moving its token) needs of the rest of the engine. */
export interface StepContext {
  red: RED;
  files: FileStore;
  journal: Journal;
  registry: Registry;
  active: ActiveSessions;
  tracker: TokenTracker;
  waiters: ItemWaiters;
  health: StoreHealth;
  /** The effects journals of the steps in progress. */
  effects: Effects;
  /** Each step counted and timed. */
  metrics: Metrics;
  environment(id: string): StepEnvironment | undefined;
  orderOf(processId: string): number;
  idleSeconds(channel: ChannelName): number;
  flowsRunning(): boolean;
  /** How many deploys (flows stopping) this runtime has seen. */
  deploys(): number;
  /** A start waits for the test chat's opening message. */
  registerWaitingNode(waiting: WaitingNode): void;
  /** A Session's whole history and log: what its store keeps and the step's lines not yet committed. */
  storyOf(session: SessionRecord): Promise<SessionStory>;
  /** A Session that ended was committed: kept for the Sessions view a while, with its history and log as they were at the end. */
  ended(session: SessionRecord, story: SessionStory): void;
  wakeAt(due: number): void;
  countsChanged(): void;
}
