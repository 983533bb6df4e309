import type { Engine } from '../engine/engine';
import { RecentKeys } from '../stores/recent-keys';
import { CLICK_KIND, clickReader, recordClick } from './answer-click';
import { readClick } from './click';
import type { TeamChatEnvironment, TeamChatEnvironments } from './environment';
import { MESSAGE_KIND, messageReader, recordMessage } from './inbound';
import { readMessageEvent } from './message-event';
import { readAssistantEvent, type AssistantThreads } from './assistant-threads';
import { readAgentStop, type AgentStop } from './agent-sessions';
import type { Gatherings } from './stream/gatherings';

/** Slack retries for about 5 minutes; an hour covers every retry. */
const SEEN_FOR_MS = 60 * 60 * 1000;

export interface ReceiveOptions {
  /** Slack's retry count (`X-Slack-Retry-Num`, or Socket Mode's `retry_attempt`); 0 for a first delivery. */
  retryNum?: number;
}

type Payload = Record<string, any>;

/**
 * The one way into the team-chat module for what Slack sends, whatever the transport: the event
 * URL, the interactivity URL and Socket Mode each verify the request (a signature over HTTP; the
 * socket needs none), call `receive`, and acknowledge only once it resolves (HTTP 200, the
 * socket's ack): by then the message or click is durably recorded for its conversation. When it
 * rejects they do not acknowledge (HTTP 503, no ack) and Slack delivers again. A redelivery, and
 * the second copy of a mention, is recorded once (the store's dedupe keys), for both transports.
 */
export class TeamChatInbound {
  /** Clicks that answer nothing get a note once, however often Slack delivers them (bounded). */
  private readonly noted = new RecentKeys(SEEN_FOR_MS);

  constructor(
    private readonly engine: Engine,
    environments: TeamChatEnvironments,
    private readonly assistant: AssistantThreads,
    private readonly gatherings: Gatherings,
  ) {
    engine.registerInbound(
      MESSAGE_KIND,
      messageReader(engine, environments, (env, channel, thread) => assistant.contextOf(env, channel, thread)),
    );
    engine.registerInbound(CLICK_KIND, clickReader(engine, environments));
  }

  /** Resolves when it is safe to acknowledge; rejects when the payload could not be recorded. */
  async receive(env: TeamChatEnvironment, payload: Payload, options: ReceiveOptions = {}): Promise<void> {
    if (payload.type === 'event_callback') return this.takeEvent(env, payload, options);
    if (payload.type === 'block_actions') return this.takeClick(env, payload);
    env.node.debug(`Slack payload of type ${String(payload.type)} ignored`);
  }

  /**
   * A person's message is recorded for its conversation; everything else (bots, edits, joins, other
   * events) needs nothing. The acknowledgement never waits for auth.test: Slack wants it within 3
   * s, and auth.test may take up to its time-out, or a 429's Retry-After, and is asked again after
   * a failure. Until it has answered, the step reads what only the app's identity tells (its own
   * message, a mention without app_mention) when it handles the message (inbound.ts).
   */
  private async takeEvent(env: TeamChatEnvironment, body: Payload, options: ReceiveOptions): Promise<void> {
    if (typeof body.event !== 'object' || body.event === null) return;
    const app = env.knownIdentity();
    // Asked now, not awaited: the next events find it known, and this one's step waits for it less.
    if (!app) void env.identity();
    const assistantEvent = readAssistantEvent(body.event);
    if (assistantEvent) return this.assistant.take(env, assistantEvent, String(body.event_id ?? ''));
    const stop = readAgentStop(body.event);
    if (stop) return this.agentStopped(env, stop);
    const message = readMessageEvent(body.event, String(body.team_id ?? ''), app ?? {});
    if ('ignored' in message) {
      env.node.debug(`event ${body.event_id ?? ''} ignored: ${message.ignored}`);
      return;
    }
    if (options.retryNum) env.node.debug(`event ${body.event_id ?? ''}: Slack's retry ${options.retryNum}`);
    await recordMessage(this.engine, env, message, app);
  }

  /**
   * The person pressed stop in their agent session (an app declared as an agent): the answers
   * streaming in that thread send no more and go on with `stopped: true` (Stream reply). Slack
   * stopped the streams but leaves the session as it was: it is set to wait for the person again.
   * In memory, at once: the answer's step is running on this instance and holds the conversation.
   */
  private agentStopped(env: TeamChatEnvironment, stop: AgentStop): void {
    env.agent.learned();
    const answers = this.gatherings.stoppedInSlack(env.id, stop.channel, stop.threadTs, stop.streams);
    env.node.debug(`agent session stopped in ${stop.channel} ${stop.threadTs}: ${answers} answer(s) stopped`);
    void env.agent.setStatus(stop.channel, stop.threadTs, 'active');
  }

  private async takeClick(env: TeamChatEnvironment, payload: Payload): Promise<void> {
    const click = readClick(payload);
    if ('ignored' in click) {
      env.node.debug(`click ignored: ${click.ignored}`);
      return;
    }
    const id =
      typeof payload.trigger_id === 'string' && payload.trigger_id
        ? payload.trigger_id
        : `${click.channel}/${click.messageTs}/${payload.actions?.[0]?.action_ts ?? ''}/${click.user}`;
    await recordClick(this.engine, env, click, id, (key) => !this.noted.seen(key));
  }
}
