import { engineFor, type EnvironmentNote } from '../engine/engine';
import type { RED } from '../model/red';
import { missingCredentials, type VoiceEnvironment } from './environment';
import { restClient } from './rest-client';
import { nextPath, routeUrl, startPath } from './urls';

/**
 * Auto-Deploy Voice Webhook: points the Environment's phone number at its start URL, and its call
 * status callback at the next URL so a hang-up ends a waiting Session at once. Every outcome is
 * one line in the Node-RED log.
 */
export async function autoDeployVoiceWebhook(red: RED, env: VoiceEnvironment): Promise<void> {
  if (!env.autoDeploy) return;
  const node = env.node;
  const note = (fill: EnvironmentNote['fill'], text: string) => engineFor(red).noteEnvironment(env.id, { fill, text });
  if (!env.phoneNumberSid.startsWith('PN')) {
    node.log(`Auto-deploy skipped: Phone Number SID "${env.phoneNumberSid}" does not begin with PN`);
    note('yellow', 'auto-deploy skipped: SID is not PN…');
    return;
  }
  if (!env.publicBaseUrl) {
    node.log('Auto-deploy skipped: no Public base URL is set, so no webhook URL can be built');
    note('yellow', 'auto-deploy skipped: no public base URL');
    return;
  }
  if (!env.credentials.token) {
    node.log('Auto-deploy skipped: the Environment has no token; open it in the editor and deploy again');
    note('yellow', 'auto-deploy skipped: no token');
    return;
  }
  const missing = missingCredentials(env);
  if (missing.length) {
    node.error(`4008 ModuleMissingConfiguration: auto-deploy needs ${missing.join(' and ')}`);
    note('red', 'auto-deploy: 4008 missing credentials');
    return;
  }
  const root = red.settings.httpNodeRoot;
  const voiceUrl = routeUrl(env, root, startPath(env.credentials.token));
  try {
    const client = restClient(env.credentials.accountSid, env.credentials.authToken, env.apiUrl);
    await client.incomingPhoneNumbers(env.phoneNumberSid).update({
      voiceUrl,
      voiceMethod: 'POST',
      statusCallback: routeUrl(env, root, nextPath(env.id)),
      statusCallbackMethod: 'POST',
    });
    node.log(`Auto-deploy: phone number ${env.phoneNumberSid} now sends its calls to ${voiceUrl}`);
    note('green', 'voice webhook set');
  } catch (err) {
    node.error(`4001 ModuleException: auto-deploy of ${env.phoneNumberSid} failed: ${(err as Error).message}`);
    note('red', 'auto-deploy failed: 4001');
  }
}
