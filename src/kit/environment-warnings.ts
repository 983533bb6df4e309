/**
 * What every kind of Environment says in the deploy log about its own set-up, in the same words
 * whichever module it belongs to (the log line already names the node).
 */
export const ENVIRONMENT_WARNINGS = {
  /** The editor gives an Environment its token when it is created or imported; a flow deployed another way may have none. */
  noToken: 'No token: open this Environment in the editor and deploy again, so that it gets one. Until then its inbound URLs answer 404',
  signaturesOff: 'Validate Signatures is off: anyone who knows the inbound URLs can send requests. Use it only for brief local debugging',
  missingCredential: (field: string, effect: string) => `No ${field}: ${effect}`,
};
