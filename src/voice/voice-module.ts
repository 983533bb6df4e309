import { engineFor, type Engine } from '../engine/engine';
import { RefusalLog } from '../http/refusal-log';
import { EnvironmentDirectory } from '../kit/environment-directory';
import { perRuntime } from '../kit/per-runtime';
import type { RED } from '../model/red';
import { CallRounds } from './call-rounds';
import type { VoiceEnvironment } from './environment';
import { RetriedWebhooks } from './retries';
import { SharedRounds } from './shared-rounds';

/**
 * What the voice module keeps for one runtime, built by its node set's register function and
 * handed down to the routes, the Channel behaviour and the nodes.
 */
export interface VoiceModule {
  red: RED;
  engine: Engine;
  /** Every deployed voice Environment, by id (next webhook) and token (start webhook). */
  environments: EnvironmentDirectory<VoiceEnvironment>;
  /** The verbs of each call's answer in the making, when the store is this process's. */
  rounds: CallRounds;
  /** The same when several instances share the Environment's store. */
  shared: SharedRounds;
  /** Answers the provider may ask for again (a retried webhook). */
  retried: RetriedWebhooks;
  /** Refused webhooks, said once in a while rather than per request. */
  refusals: RefusalLog;
}

export const voiceModuleFor = perRuntime((red): VoiceModule => {
  const engine = engineFor(red);
  return {
    red,
    engine,
    environments: new EnvironmentDirectory<VoiceEnvironment>(),
    rounds: new CallRounds(),
    shared: new SharedRounds(engine),
    retried: new RetriedWebhooks(),
    refusals: new RefusalLog(red),
  };
});
