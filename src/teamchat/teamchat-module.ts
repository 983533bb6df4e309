import { engineFor, type Engine } from '../engine/engine';
import { EnvironmentDirectory } from '../kit/environment-directory';
import { perRuntime } from '../kit/per-runtime';
import type { RED } from '../model/red';
import type { TeamChatEnvironment, TeamChatEnvironments } from './environment';
import { TeamChatInbound } from './receive';
import { AssistantThreads } from './assistant-threads';
import { Gatherings } from './stream/gatherings';
import { APPEND_INTERVAL_MS } from './stream/pacer';
import { StreamPacers } from './stream/pacers';

/**
 * What the team-chat module keeps for one runtime, built by its node set's register function and
 * handed down to the routes, Socket Mode, the Channel behaviour and the Tasks.
 */
export interface TeamChatModule {
  engine: Engine;
  /** Deployed team-chat Environments, by id and by the token in inbound URLs. */
  environments: TeamChatEnvironments;
  /** The one way in for what Slack sends (event URL, interactivity URL, Socket Mode). */
  inbound: TeamChatInbound;
  /** Assistant threads: suggested prompts and `{teamchat.context}`. */
  assistant: AssistantThreads;
  /** The answers Stream reply nodes are gathering. */
  gatherings: Gatherings;
  /** One pace of the stream appends per app and workspace, shared by the Environments of that app. */
  pacers: StreamPacers;
}

export const teamchatModuleFor = perRuntime((red: RED): TeamChatModule => {
  const engine = engineFor(red);
  const environments = new EnvironmentDirectory<TeamChatEnvironment>();
  const assistant = new AssistantThreads(red, engine, environments);
  const gatherings = new Gatherings();
  // An answer a Session never finished is dropped with it.
  engine.onSessionEvent((event) => {
    if (event.type === 'state' && (event.session.state === 'completed' || event.session.state === 'ended')) gatherings.sessionEnded(event.session.id);
  });
  // settings.js `channelSessions.streamPace` (seconds): the least time between two appends of an app in a workspace.
  const pace = Number((red.settings.channelSessions as { streamPace?: unknown } | undefined)?.streamPace);
  const pacers = new StreamPacers(pace >= 0 && Number.isFinite(pace) ? pace * 1000 : APPEND_INTERVAL_MS);
  return { engine, environments, assistant, gatherings, pacers, inbound: new TeamChatInbound(engine, environments, assistant, gatherings) };
});
