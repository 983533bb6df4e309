import { BodyTooLarge, parseForm, readRawBody, signedForm } from '../../http/raw-body';
import { hidePathToken } from '../../http/shown-secrets';
import { runtimeText } from '../../model/texts';
import type { HttpRequest, HttpResponse } from '../../model/red';
import type { VoiceModule } from '../voice-module';
import { missingCredentials, type VoiceEnvironment } from '../environment';
import { checkWebhookSignature } from '../../telco/twilio-signature';
import { renderTwiml } from '../verbs';
import { answer } from '../../http/answer';

/** A webhook that passed every check: its Environment and its form fields, with the call id. */
export interface VoiceWebhook {
  env: VoiceEnvironment;
  params: Record<string, string>;
  callSid: string;
}

/** Form bodies from the provider are small; anything bigger is not a call event. */
const BODY_LIMIT = 64 * 1024;

/**
 * Reads and checks a voice webhook in the order a user can act on: unknown Environment (404),
 * body too large (413), missing credentials (4008, hang up), bad signature (4020, 403), no
 * CallSid (4012, 400). Answers the provider itself and returns undefined when a check fails, so
 * nothing runs.
 */
export async function readVoiceWebhook(
  voice: VoiceModule,
  req: HttpRequest,
  res: HttpResponse,
  env: VoiceEnvironment | undefined,
): Promise<VoiceWebhook | undefined> {
  if (!env) {
    res.status(404).type('text/plain').send('No voice Environment is deployed for this URL');
    return undefined;
  }
  let raw: Buffer;
  try {
    raw = await readRawBody(req, BODY_LIMIT);
    // A body kept by the engine's capture layer was read under its own, larger limit.
    if (raw.length > BODY_LIMIT) throw new BodyTooLarge(`request body over ${BODY_LIMIT} bytes`);
  } catch (err) {
    const tooLarge = err instanceof BodyTooLarge;
    res
      .status(tooLarge ? 413 : 400)
      .type('text/plain')
      .send(tooLarge ? 'Request body too large' : 'Unreadable request body');
    return undefined;
  }
  const missing = missingCredentials(env);
  if (missing.length) {
    env.node.error(runtimeText(voice.red, 'voice', 'runtime.log.webhookMissingCredentials', { fields: missing.join(' and '), environment: env.name }));
    sendTwiml(res, renderTwiml([{ verb: 'hangup' }]));
    return undefined;
  }
  const signature = checkWebhookSignature(
    { validate: env.validateSignatures, key: env.credentials.webhookSigningSecret || env.credentials.authToken, publicBaseUrl: env.publicBaseUrl },
    req,
    signedForm(raw),
    voice.red.settings.httpNodeRoot,
  );
  if (!signature.ok) {
    const reason = {
      'no-key': () => runtimeText(voice.red, 'voice', 'runtime.log.signatureNoKey'),
      missing: () => runtimeText(voice.red, 'voice', 'runtime.log.signatureMissing'),
      // The start URL carries the Environment's token: the line shows only its first characters.
      mismatch: () => runtimeText(voice.red, 'voice', 'runtime.log.signatureMismatch', { url: hidePathToken(signature.url, 'start') }),
    }[signature.kind]();
    const line = runtimeText(voice.red, 'voice', 'runtime.log.webhookRefused', { reason });
    voice.refusals.report(`${env.id}:${signature.kind}`, (said) => env.node.error(said), line);
    res.status(403).type('text/plain').send('Signature check failed');
    return undefined;
  }
  const params = parseForm(raw);
  const callSid = params.CallSid;
  if (!callSid) {
    env.node.error(runtimeText(voice.red, 'voice', 'runtime.log.webhookNoCallSid'));
    res.status(400).type('text/plain').send('CallSid is missing from the request');
    return undefined;
  }
  return { env, params, callSid };
}

export function sendTwiml(res: HttpResponse, twiml: string): void {
  answer(res, 200, 'text/xml', twiml);
}
