import type { ChannelBehaviour } from './behaviour';
import { TEST_CHANNEL, type ChannelName } from '../model/channels';
import type { InboundReader } from './delivery';
import { TaskError } from '../model/errors';
import type { RedNode } from '../model/red';
import type { SessionRecord, TokenMessage } from '../model/session';
import type { InboundMessage, StartRegistration } from './starts';

/** A node a Session can wait at: InputTask, the buttons step, the voice recording, a start asking for its opening. */
export interface WaitingNode {
  node: RedNode;
  /** Seconds before `timedOut` is called; 0 or none waits until the Session expires. */
  timeoutSeconds?: number;
  resume(session: SessionRecord, message: InboundMessage, token: TokenMessage): Promise<void>;
  timedOut?(session: SessionRecord, token: TokenMessage): Promise<void>;
}

/** What the modules and the deployed nodes plug in: Channel behaviours, inbound kinds, starts, waiting nodes. */
export class Registry {
  readonly starts = new Map<string, StartRegistration>();
  readonly waitingNodes = new Map<string, WaitingNode>();
  readonly readers = new Map<string, InboundReader>();
  private readonly behaviours = new Map<ChannelName, ChannelBehaviour>();
  private readonly moduleOfChannel = new Map<ChannelName, string>();

  registerChannel(moduleKey: string, behaviour: ChannelBehaviour): void {
    this.behaviours.set(behaviour.channel, behaviour);
    this.moduleOfChannel.set(behaviour.channel, moduleKey);
  }

  /** The Channels a module serves (a messaging Environment's SMS and messenger), in the order they were registered. */
  channelsOf(moduleKey: string): ChannelName[] {
    return [...this.moduleOfChannel].filter(([, key]) => key === moduleKey).map(([channel]) => channel);
  }

  behaviourFor(channel: ChannelName): ChannelBehaviour {
    const behaviour = this.behaviours.get(channel);
    if (!behaviour) throw new TaskError(4012, `No module handles the ${channel} Channel`);
    return behaviour;
  }

  /**
   * The behaviour a Session's Tasks use: a test Session's transport is always the Chat Channel's
   * (nothing reaches a provider), whichever Channel it plays.
   */
  behaviourOf(session: Pick<SessionRecord, 'channel' | 'isTest'>): ChannelBehaviour {
    return this.behaviourFor(session.isTest ? TEST_CHANNEL : session.channel);
  }

  /** The module key of a Channel: the shared Start names the Environment it serves by it. */
  moduleKeyOf(channel: ChannelName): string {
    return this.moduleOfChannel.get(channel) ?? '';
  }

  sessionEnded(session: SessionRecord): void {
    if (!session.isTest) {
      this.behaviours.get(session.channel)?.sessionEnded?.(session);
      return;
    }
    this.behaviours.get(TEST_CHANNEL)?.sessionEnded?.(session);
    // A test Session may have walked any module's Tasks: each frees what they kept for it.
    for (const behaviour of this.behaviours.values()) behaviour.testSessionEnded?.(session);
  }

  unregisterStart(node: RedNode): void {
    if (this.starts.get(node.id)?.node === node) this.starts.delete(node.id);
  }

  unregisterWaitingNode(node: RedNode): void {
    if (this.waitingNodes.get(node.id)?.node === node) this.waitingNodes.delete(node.id);
  }
}
