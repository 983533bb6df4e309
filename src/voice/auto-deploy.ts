import { engineFor, type EnvironmentNote } from '../engine/engine';
import type { RED } from '../model/red';
import { missingCredentials, type VoiceEnvironment } from './environment';
import { restSettingsError } from '../telco/twilio-account';
import { restClient } from './rest-client';
import { nextPath, routeUrl, startPath } from './urls';
import { runtimeText } from '../model/texts';

/**
 * Auto-Deploy Voice Webhook: points the Environment's phone number at its start URL, and its call
 * status callback at the next URL so a hang-up ends a waiting Session at once. Every outcome is
 * one line in the Node-RED log.
 */
export async function autoDeployVoiceWebhook(red: RED, env: VoiceEnvironment): Promise<void> {
  if (!env.autoDeploy) return;
  const node = env.node;
  const note = (fill: EnvironmentNote['fill'], text: string) => engineFor(red).noteEnvironment(env.id, { fill, text });
  const say = (key: string, substitutions?: Record<string, unknown>) => runtimeText(red, 'voice', `runtime.${key}`, substitutions);
  if (!env.phoneNumberSid.startsWith('PN')) {
    node.log(say('log.autoDeploySkippedSid', { sid: env.phoneNumberSid }));
    note('yellow', say('status.autoDeploySkippedSid'));
    return;
  }
  if (!env.publicBaseUrl) {
    node.log(say('log.autoDeploySkippedBase'));
    note('yellow', say('status.autoDeploySkippedBase'));
    return;
  }
  if (!env.credentials.token) {
    node.log(say('log.autoDeploySkippedToken'));
    note('yellow', say('status.autoDeploySkippedToken'));
    return;
  }
  const missing = missingCredentials(env);
  if (missing.length) {
    node.error(say('log.autoDeployMissing', { fields: missing.join(' and ') }));
    note('red', say('status.autoDeployMissing'));
    return;
  }
  const unusable = restSettingsError(env.credentials.accountSid, env.apiUrl, `voice Environment "${env.name}"`);
  if (unusable) {
    node.error(say('log.autoDeployUnusable', { message: unusable.message }));
    note('red', say('status.autoDeployUnusable'));
    return;
  }
  const root = red.settings.httpNodeRoot;
  const voiceUrl = routeUrl(env, root, startPath(env.credentials.token));
  try {
    const client = restClient(env.credentials.accountSid, env.credentials.authToken, env.apiUrl, env.credentials.token);
    await client.incomingPhoneNumbers(env.phoneNumberSid).update({
      voiceUrl,
      voiceMethod: 'POST',
      statusCallback: routeUrl(env, root, nextPath(env.id)),
      statusCallbackMethod: 'POST',
    });
    node.log(say('log.autoDeployDone', { sid: env.phoneNumberSid, url: voiceUrl }));
    note('green', say('status.autoDeployDone'));
  } catch (err) {
    node.error(say('log.autoDeployFailed', { sid: env.phoneNumberSid, message: (err as Error).message }));
    note('red', say('status.autoDeployFailed'));
  }
}
