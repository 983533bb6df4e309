import type { WebClient } from '@slack/web-api';
import { slackErrorCode } from './slack-api';

/** An agent session's status in Slack: `processing` shows the person a stop button, `active` waits for them. */
export type AgentSessionStatus = 'processing' | 'active' | 'suspended' | 'closed';

/** Slack's warning when an agent app sets `processing` without subscribing to the stop. */
const NO_STOP_EVENT = 'missing_agent_session_stopped_event_subscription';

/** An `agent_session_stopped` event, read: the thread the person stopped, and the streams Slack stopped with it. */
export interface AgentStop {
  channel: string;
  threadTs: string;
  user: string;
  streams: string[];
}

export function readAgentStop(event: Record<string, any>): AgentStop | undefined {
  if (event.type !== 'agent_session_stopped' || typeof event.channel !== 'string' || typeof event.thread_ts !== 'string') return undefined;
  const streams = Array.isArray(event.streaming_message_ts) ? event.streaming_message_ts.filter((ts: unknown): ts is string => typeof ts === 'string') : [];
  return { channel: event.channel, threadTs: event.thread_ts, user: typeof event.user === 'string' ? event.user : '', streams };
}

/**
 * Slack's agent sessions for one Environment's app. Only an app declared as an agent (Slack's
 * `agent_view`) has them, and nothing in the token says whether it is one: the first
 * `agents.sessions.setStatus` tells (Slack refuses it to any other app, and then it is not asked
 * again until a redeploy), as does an event only agents receive. Each call is best effort: an
 * answer never fails because its session's status could not be moved.
 */
export class AgentApp {
  /** undefined until Slack has said; true: an agent; false: Slack refused a session call. */
  private agent: boolean | undefined;
  private warned = false;

  constructor(
    private readonly client: () => WebClient,
    private readonly report: (reason: 'noStopEvent' | 'failed', detail: string) => void,
  ) {}

  /** Whether Slack has shown this app to be an agent. */
  get isAgent(): boolean {
    return this.agent === true;
  }

  /** Slack sent an event only agent apps receive. */
  learned(): void {
    this.agent = true;
  }

  /** Moves the thread's agent session to `status` (creating it at `processing`); nothing for an app that is no agent, or outside a thread. */
  async setStatus(channel: string, threadTs: string | undefined, status: AgentSessionStatus, user?: string): Promise<void> {
    if (this.agent === false || !threadTs) return;
    let res: Record<string, any>;
    try {
      res = (await this.client().apiCall('agents.sessions.setStatus', {
        channel_id: channel,
        thread_ts: threadTs,
        status,
        ...(user && status === 'processing' ? { initiator_user_id: user } : {}),
      })) as Record<string, any>;
    } catch (err) {
      const code = slackErrorCode(err);
      // Refused: not an agent (or without assistant:write); not asked again. Unreached: known next time.
      if (code && this.agent === undefined) this.agent = false;
      else if (code) this.report('failed', code);
      return;
    }
    this.agent = true;
    const warnings = [res.warning, ...((res.response_metadata?.warnings as unknown[] | undefined) ?? [])].map(String);
    if (!this.warned && warnings.some((w) => w.includes(NO_STOP_EVENT))) {
      this.warned = true;
      this.report('noStopEvent', NO_STOP_EVENT);
    }
  }
}
