import type { HttpRequest, RED } from '../model/red';
import { checkWebhookSignature } from '../telco/twilio-signature';
import { displayName, type MessagingEnvironment } from './environment';
import type { MessagingModule } from './messaging-module';

/**
 * Whether a messaging webhook (`what`: "inbound", "status") carries the provider's signature; a
 * refusal is logged at most once a minute per reason, with the token left out of the URL.
 */
export function messagingSignatureValid(
  red: RED,
  refusals: MessagingModule['refusals'],
  env: MessagingEnvironment,
  req: HttpRequest,
  params: Record<string, string | string[]>,
  what: 'inbound' | 'status',
): boolean {
  const { config, credentials } = env;
  const check = checkWebhookSignature(
    { validate: config.validateSignatures, key: credentials.webhookSigningSecret || credentials.authToken || '', publicBaseUrl: config.publicBaseUrl },
    req,
    params,
    red.settings.httpNodeRoot,
  );
  if (check.ok) return true;
  if (check.kind === 'no-key') {
    refusals.report(
      `${env.id}:${what}:no-key`,
      (line) => env.node.warn(line),
      `4020 WebhookSignatureInvalid: ${what} webhook refused: "${displayName(env)}" has no Auth Token or Webhook Signing Secret to check it (4008)`,
    );
    return false;
  }
  const reason = check.kind === 'mismatch' ? 'signature does not match' : 'no X-Twilio-Signature header';
  const shown = check.url.replace(new RegExp(`/${what}/.*`), `/${what}/…`);
  refusals.report(
    `${env.id}:${what}:${reason}`,
    (line) => env.node.warn(line),
    `4020 WebhookSignatureInvalid: ${what} webhook refused (${reason} for ${shown}); nothing was run`,
  );
  return false;
}
