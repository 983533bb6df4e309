import twilio from 'twilio';
import { answer } from '../http/answer';
import { BodyTooLarge, parseForm, readRawBody, signedForm } from '../http/raw-body';
import { hidePathToken } from '../http/shown-secrets';
import type { HttpRequest, HttpResponse, RED } from '../model/red';
import { runtimeText } from '../model/texts';
import { checkWebhookSignature } from '../telco/twilio-signature';
import { displayName, type MessagingEnvironment } from './environment';
import type { MessagingModule } from './messaging-module';

/**
 * Whether a messaging webhook (`what`: "inbound", "status") carries the provider's signature; a
 * refusal is logged at most once a minute per reason, with the token in the URL shortened.
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
    const line = runtimeText(red, 'messaging', 'runtime.log.webhookNoKey', { what, name: displayName(env) });
    refusals.report(`${env.id}:${what}:no-key`, (said) => env.node.warn(said), line);
    return false;
  }
  const reason =
    check.kind === 'mismatch' ? runtimeText(red, 'messaging', 'runtime.log.signatureMismatch') : runtimeText(red, 'messaging', 'runtime.log.signatureMissing');
  const line = runtimeText(red, 'messaging', 'runtime.log.webhookRefused', { what, reason, url: hidePathToken(check.url, what) });
  refusals.report(`${env.id}:${what}:${check.kind}`, (said) => env.node.warn(said), line);
  return false;
}

/** The answer a messaging webhook gets when there is nothing to say back (replies go through the REST API). */
export const EMPTY_TWIML: string = new twilio.twiml.MessagingResponse().toString();

/**
 * Reads a messaging webhook (`what`: "inbound", "status") up to its parameters: its Environment by
 * the token in the path (404 when none), its raw body (413 / 400), its signature (403). Answers the
 * request itself and returns undefined when it goes no further.
 */
export async function readSignedWebhook(
  red: RED,
  messaging: MessagingModule,
  req: HttpRequest,
  res: HttpResponse,
  what: 'inbound' | 'status',
): Promise<{ env: MessagingEnvironment; params: Record<string, string> } | undefined> {
  const env = await messaging.environments.find(req.params.token);
  if (!env) {
    req.resume();
    res.status(404).type('text/plain').send('Unknown messaging Environment token');
    return undefined;
  }
  let raw: Buffer;
  try {
    raw = await readRawBody(req);
  } catch (err) {
    answer(res, err instanceof BodyTooLarge ? 413 : 400, 'text/xml', EMPTY_TWIML);
    return undefined;
  }
  if (!messagingSignatureValid(red, messaging.refusals, env, req, signedForm(raw), what)) {
    res.status(403).type('text/plain').send('Twilio Request Validation Failed.');
    return undefined;
  }
  return { env, params: parseForm(raw) };
}
