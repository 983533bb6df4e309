import { runtimeText } from '../model/texts';
import type { WebClient } from '@slack/web-api';
import type { EnvironmentDirectory } from '../kit/environment-directory';
import { TaskError } from '../model/errors';
import { apiUrlError, isUsableApiUrl } from '../http/api-url';
import { publicRouteUrl, rootedPath } from '../http/public-url';
import type { RED, RedNode } from '../model/red';
import { readSettings, type TeamChatSettings } from './settings';
import { postMessageCaller, type PostMessageArguments } from './post-message';
import { createClient, learnIdentity, redLogger, type AppIdentity } from './slack-api';
import { slackFileOrigins } from './slack-fetch';
import { STATUS_REFRESH_S, ThreadStatuses } from './thread-status';
import { createHash } from 'node:crypto';
import { AgentApp } from './agent-sessions';

export const MODULE_KEY = 'teamchat';
export const EVENT_PATH = '/TeamChat/event';
export const INTERACT_PATH = '/TeamChat/interact';
export const START_PATH = '/TeamChat/start';

/** A deployed `teamchat-environment`: settings, credentials and what Slack said about the token. */
export class TeamChatEnvironment {
  readonly id: string;
  readonly settings: TeamChatSettings;
  private webClient: WebClient | undefined;
  private poster: ((args: PostMessageArguments) => Promise<{ ts?: string }>) | undefined;
  private identityOnce: Promise<AppIdentity> | undefined;
  private learned: AppIdentity | undefined;
  /** The thread statuses (Set status) this Environment keeps up; stopped with it. */
  readonly statuses: ThreadStatuses;
  /** Slack said this workspace has no streaming: Stream reply posts and edits from then on. */
  readonly noStreaming = { latched: false };
  /** Slack's agent sessions, where the app is declared as an agent. */
  readonly agent: AgentApp;

  constructor(
    private readonly red: RED,
    readonly node: RedNode,
    config: Record<string, unknown>,
  ) {
    this.id = node.id;
    this.settings = readSettings(config);
    // settings.js `channelSessions.statusRefresh` (seconds): how often a standing status is set again.
    const refresh = Number((red.settings.channelSessions as { statusRefresh?: unknown } | undefined)?.statusRefresh);
    this.agent = new AgentApp(
      () => this.client(),
      (reason, detail) => this.node.warn(runtimeText(this.red, 'teamchat', `runtime.log.agent.${reason}`, { detail })),
    );
    this.statuses = new ThreadStatuses(
      // async: a client that cannot be made (4008) rejects, never throws inside a timer.
      async (args) => this.client().assistant.threads.setStatus(args),
      (refresh > 0 ? refresh : STATUS_REFRESH_S) * 1000,
      (err) => this.node.warn(runtimeText(this.red, 'teamchat', 'runtime.log.statusFailed', { message: err instanceof Error ? err.message : String(err) })),
    );
  }

  get name(): string {
    return this.settings.name || this.node.id;
  }

  get signingSecret(): string {
    return this.node.credentials?.signingSecret?.trim() ?? '';
  }

  get botToken(): string {
    return this.node.credentials?.botToken?.trim() ?? '';
  }

  get token(): string {
    return this.node.credentials?.token?.trim() ?? '';
  }

  /** The App-Level Token (`xapp-`) Socket Mode connects with. */
  get appToken(): string {
    return this.node.credentials?.appToken?.trim() ?? '';
  }

  /** The WebClient with the bot token; a Task without one, or with an unusable API URL, stops with 4008, never a crash. */
  client(): WebClient {
    if (!this.webClient) this.checkCalls();
    this.webClient ??= createClient(this.botToken, this.settings.apiUrl, redLogger(this.red.log));
    return this.webClient;
  }

  /** chat.postMessage with the bot token (post-message.ts: the replies' path, without the WebClient); 4008 as for client(). */
  postMessage(args: PostMessageArguments): Promise<{ ts?: string }> {
    // Checked until the poster is made: the Environment's settings do not change until a redeploy.
    if (!this.poster) this.checkCalls();
    // Slack clears a thread's status when the app posts there: it is no longer kept up.
    this.statuses.posted(args.channel, typeof args.thread_ts === 'string' ? args.thread_ts : undefined);
    this.poster ??= postMessageCaller(this.botToken, this.settings.apiUrl, (err) =>
      this.red.log.warn(`[channel-sessions] ${runtimeText(this.red, 'teamchat', 'runtime.log.requestFailed', { message: err.message })}`),
    );
    return this.poster(args);
  }

  /** 4008 when Web API calls cannot be made: no Bot Token, or an API URL they cannot go through. */
  private checkCalls(): void {
    if (!this.botToken) throw new TaskError(4008, `Team-chat Environment "${this.name}" has no Bot Token`);
    const unusable = apiUrlError(this.settings.apiUrl, `team-chat Environment "${this.name}"`);
    if (unusable) throw unusable;
  }

  /** auth.test once per deployed Environment; a failure is tried again next time. Without a way to ask (see checkCalls), nothing is known. */
  identity(): Promise<AppIdentity> {
    if (!this.botToken || !isUsableApiUrl(this.settings.apiUrl)) return Promise.resolve({});
    if (!this.identityOnce) {
      this.identityOnce = learnIdentity(this.client()).then(
        (identity) => (this.learned = identity),
        (err: Error) => {
          this.identityOnce = undefined;
          this.red.log.warn(`[channel-sessions] ${runtimeText(this.red, 'teamchat', 'runtime.log.authTestFailed', { name: this.name, message: err.message })}`);
          return {};
        },
      );
    }
    return this.identityOnce;
  }

  /**
   * What auth.test said, once it has answered; undefined until then (and while it fails), for
   * what must not wait for it: an event's acknowledgement. Without a way to ask, nothing is known.
   */
  knownIdentity(): AppIdentity | undefined {
    if (!this.botToken || !isUsableApiUrl(this.settings.apiUrl)) return {};
    return this.learned;
  }

  /** Whether the bot token has a scope; true when Slack never said (Slack then refuses with missing_scope). */
  async hasScope(scope: string): Promise<boolean> {
    const { scopes } = await this.identity();
    return scopes === undefined || scopes.includes(scope);
  }

  /** Only a scope Slack listed counts, for optional extras (users:read for profile names). */
  async grantedScope(scope: string): Promise<boolean> {
    const { scopes } = await this.identity();
    return !!scopes?.includes(scope);
  }

  /** Stops a Task before anything is posted when a scope is missing. */
  async requireScope(scope: string, what: string): Promise<void> {
    if (!(await this.hasScope(scope))) {
      throw new TaskError(4008, `${what} needs the ${scope} scope; add it to the Slack app and reinstall it`);
    }
  }

  /**
   * Which app in which workspace the Bot Token is (its team and bot, as auth.test tells), for
   * what Slack counts per app and workspace whichever Environment calls: the stream pace. Until
   * auth.test has answered, the token itself (hashed) stands for it.
   */
  async appKey(): Promise<string> {
    const { team, botId, botUserId } = await this.identity();
    if (team && (botId || botUserId)) return `${team}/${botId ?? botUserId}`;
    return `token/${createHash('sha256').update(this.botToken).digest('hex').slice(0, 32)}`;
  }

  /** Origins that may receive the bot token when files are downloaded (Slack's own, or `apiUrl`'s). */
  fileOrigins(): string[] {
    return slackFileOrigins(this.settings.apiUrl);
  }

  routeUrl(path: string): string {
    const full = `${path}/${this.token}`;
    return publicRouteUrl(this.settings.publicBaseUrl, this.red.settings.httpNodeRoot, full) ?? rootedPath(this.red.settings.httpNodeRoot, full);
  }
}

/** Deployed team-chat Environments of a runtime, by id and by the token in inbound URLs. */
export type TeamChatEnvironments = EnvironmentDirectory<TeamChatEnvironment>;

/** The Environment a Task uses: its own property, else the Session's team-chat Environment. */
export function environmentFor(
  environments: TeamChatEnvironments,
  nodeEnvironment: string | undefined,
  sessionEnvironment?: string,
): TeamChatEnvironment | undefined {
  return (nodeEnvironment ? environments.get(nodeEnvironment) : undefined) ?? (sessionEnvironment ? environments.get(sessionEnvironment) : undefined);
}
