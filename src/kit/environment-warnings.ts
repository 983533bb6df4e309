import type { RED } from '../model/red';
import { runtimeText } from '../model/texts';

/**
 * What every kind of Environment says in the deploy log about its own set-up, in the same words
 * whichever module it belongs to (the log line already names the node).
 */
export const ENVIRONMENT_WARNINGS = {
  /** The editor gives an Environment its token when it is created or imported; a flow deployed another way may have none. */
  noToken: (red: RED) => runtimeText(red, 'core', 'runtime.environment.noToken'),
  signaturesOff: (red: RED) => runtimeText(red, 'core', 'runtime.environment.signaturesOff'),
  missingCredential: (red: RED, field: string, effect: string) => runtimeText(red, 'core', 'runtime.environment.missingCredential', { field, effect }),
};
