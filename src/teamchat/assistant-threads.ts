import type { Engine } from '../engine/engine';
import type { InboundReader } from '../engine/delivery';
import { runtimeText } from '../model/texts';
import type { RED } from '../model/red';
import { conversationKey } from './conversation';
import type { TeamChatEnvironment, TeamChatEnvironments } from './environment';

/** `{teamchat.context}`: the channel the person looks at beside an assistant thread. */
export interface ThreadContext {
  channelId: string;
  teamId: string;
  enterpriseId: string;
}

/** A suggested prompt of the team-chat start (`suggestedPrompts`). */
export interface SuggestedPrompt {
  title: string;
  message: string;
}

/** Slack shows at most four suggested prompts. */
export const MAX_PROMPTS = 4;

/** What the team-chat start serving an Environment asks of its assistant threads. */
export interface AssistantStart {
  nodeId: string;
  variable: string;
  prompts: SuggestedPrompt[];
}

/** Contexts of threads whose Session has not opened yet, kept per Environment (a bound, oldest out first). */
const CONTEXTS_KEPT = 1000;

export const CONTEXT_KIND = 'teamchat-context';

/**
 * An `assistant_thread_started` or `assistant_thread_context_changed` event, read; or their
 * counterparts for an app declared as an agent (Slack's `agent_view`), which name no thread: the
 * person opened the app's messages (`app_home_opened`, tab `messages`) or looks at another
 * channel beside them (`app_context_changed`). `threadTs` is empty then.
 */
export interface AssistantEvent {
  type: 'started' | 'changed';
  channel: string;
  threadTs: string;
  user: string;
  context: ThreadContext;
  /** From the agent experience (no thread; prompts are set for the whole conversation). */
  agent?: boolean;
}

export function readAssistantEvent(event: Record<string, any>): AssistantEvent | undefined {
  if (event.type === 'app_home_opened' || event.type === 'app_context_changed') return readAgentViewEvent(event);
  const type = event.type === 'assistant_thread_started' ? 'started' : event.type === 'assistant_thread_context_changed' ? 'changed' : undefined;
  const thread = event.assistant_thread as Record<string, any> | undefined;
  if (!type || typeof thread !== 'object' || !thread || typeof thread.channel_id !== 'string' || typeof thread.thread_ts !== 'string') return undefined;
  const context = (typeof thread.context === 'object' && thread.context) || {};
  const text = (v: unknown) => (typeof v === 'string' ? v : '');
  return {
    type,
    channel: thread.channel_id,
    threadTs: thread.thread_ts,
    user: text(thread.user_id),
    context: { channelId: text(context.channel_id), teamId: text(context.team_id), enterpriseId: text(context.enterprise_id) },
  };
}

/**
 * `app_home_opened` on the Messages tab, and `app_context_changed`: the context is the first
 * channel among the entities Slack lists (the most relevant first); none gives an empty one.
 */
function readAgentViewEvent(event: Record<string, any>): AssistantEvent | undefined {
  if (typeof event.channel !== 'string' || !event.channel) return undefined;
  const opened = event.type === 'app_home_opened';
  // The Home tab is the app's page, not its conversation; only an agent's open carries a context.
  if (opened && (event.tab !== 'messages' || typeof event.context !== 'object' || !event.context)) return undefined;
  const entities: unknown[] = Array.isArray(event.context?.entities) ? event.context.entities : [];
  const channel = entities.find((e): e is Record<string, unknown> => typeof e === 'object' && e !== null && (e as any).type === 'slack#/types/channel_id');
  const text = (v: unknown) => (typeof v === 'string' ? v : '');
  return {
    type: opened ? 'started' : 'changed',
    channel: event.channel,
    threadTs: '',
    user: text(event.user),
    context: { channelId: text(channel?.value), teamId: text(channel?.team_id), enterpriseId: text(channel?.enterprise_id) },
    agent: true,
  };
}

/**
 * Assistant threads (Slack's AI app split view): when one opens, the start's suggested prompts are
 * set in it, and its context (the channel the person looks at) is kept for the Session its first
 * message opens (`{teamchat.context}`); a later change of context updates the live Session.
 */
export class AssistantThreads {
  /** Environment id -> the start serving it (its variable and prompts), set by the deployed team-chat starts. */
  readonly starts = new Map<string, AssistantStart>();
  /** Environment id -> thread -> its latest context, until a Session takes it. */
  private readonly contexts = new Map<string, Map<string, ThreadContext>>();

  constructor(
    private readonly red: RED,
    private readonly engine: Engine,
    environments: TeamChatEnvironments,
  ) {
    engine.registerInbound(CONTEXT_KIND, this.contextReader(environments));
  }

  /** Resolves once the event is handled (its context recorded for a live Session); Slack's prompts call is not awaited. */
  async take(env: TeamChatEnvironment, event: AssistantEvent, eventId: string): Promise<void> {
    this.keep(env.id, event);
    if (event.agent) env.agent.learned();
    if (event.type === 'started') this.suggest(env, event);
    const conversation = conversationKey(env.settings.sessionMode, { channel: event.channel, user: event.user, threadTs: event.threadTs });
    if (!(await this.engine.liveSessionFor(env.id, conversation))) return;
    await this.engine.accept({
      environment: env.id,
      conversation,
      kind: CONTEXT_KIND,
      payload: { context: event.context },
      ...(eventId ? { dedupe: { key: `teamchat-context/${env.id}/${eventId}`, ttlMs: 60 * 60 * 1000 } } : {}),
    });
  }

  /** The context an assistant thread has (or, for an agent, its conversation), for the Session its first message opens. */
  contextOf(environment: string, channel: string, threadTs: string): ThreadContext | undefined {
    const kept = this.contexts.get(environment);
    return kept?.get(`${channel}\n${threadTs}`) ?? kept?.get(`${channel}\n`);
  }

  private keep(environment: string, event: AssistantEvent): void {
    let kept = this.contexts.get(environment);
    if (!kept) this.contexts.set(environment, (kept = new Map()));
    const key = `${event.channel}\n${event.threadTs}`;
    kept.delete(key);
    kept.set(key, event.context);
    while (kept.size > CONTEXTS_KEPT) kept.delete(kept.keys().next().value as string);
  }

  /** The Environment is no longer deployed: its threads' contexts go. */
  forget(environment: string): void {
    this.contexts.delete(environment);
  }

  private suggest(env: TeamChatEnvironment, event: AssistantEvent): void {
    const prompts = this.starts.get(env.id)?.prompts ?? [];
    if (!prompts.length) return;
    let client;
    try {
      client = env.client();
    } catch {
      return;
    }
    client.assistant.threads
      // An agent's prompts name no thread: Slack drops the call silently when one is named.
      .setSuggestedPrompts({ channel_id: event.channel, ...(event.threadTs ? { thread_ts: event.threadTs } : {}), prompts })
      .catch((err: Error) => env.node.warn(runtimeText(this.red, 'teamchat', 'runtime.log.promptsFailed', { message: err.message })));
  }

  /** A context change read in its conversation's step: the live Session's `{<variable>.context}` is the new one. */
  private contextReader(environments: TeamChatEnvironments): InboundReader {
    return async (item, live) => {
      if (!live || !environments.get(item.environment)) return undefined;
      const context = (item.payload as { context?: ThreadContext }).context;
      const variable = this.starts.get(item.environment)?.variable ?? 'teamchat';
      const value = live.vars[variable];
      if (context && value && typeof value === 'object') (value as Record<string, unknown>).context = context;
      // Nothing to hand the flow: the step commits the Session as changed here.
      return undefined;
    };
  }
}
