import { engineFor, type Engine } from '../engine/engine';
import { RefusalLog } from '../http/refusal-log';
import { EnvironmentDirectory } from '../kit/environment-directory';
import { perRuntime } from '../kit/per-runtime';
import type { RED } from '../model/red';
import type { MessagingEnvironment, MessagingEnvironments } from './environment';
import { MediaLinks } from './media-links';

/**
 * What the messaging module keeps for one runtime, built by its node set's register function and
 * handed down to the routes, the Channel behaviours and the nodes.
 */
export interface MessagingModule {
  engine: Engine;
  /** Deployed messaging Environments, by id and by token. */
  environments: MessagingEnvironments;
  /** The signed links replies give the provider to fetch their files from. */
  links: MediaLinks;
  /** Refused webhooks, said once in a while rather than per request. */
  refusals: RefusalLog;
}

export const messagingModuleFor = perRuntime((red: RED): MessagingModule => ({
  engine: engineFor(red),
  environments: new EnvironmentDirectory<MessagingEnvironment>(),
  links: new MediaLinks(
    String(red.settings.userDir ?? process.cwd()),
    (red.settings.channelSessions as { fileDirectory?: unknown } | undefined)?.fileDirectory,
  ),
  refusals: new RefusalLog(red),
}));
