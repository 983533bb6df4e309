import { apiUrlSetting, credentialsField, ENVIRONMENT_WARNINGS, needsLine, setUpStatus, urlLine, usersOf, type Need } from '../kit/environment-warnings';
import { accountSidSetting } from '../telco/twilio-account';
import type { RED, RedNode } from '../model/red';
import { autoDeployVoiceWebhook } from './auto-deploy';
import { DEFAULT_CALLS_PER_SECOND, MAX_CALLS_PER_SECOND, callsPerSecondOf, missingCredentials, type VoiceEnvironment } from './environment';
import { isE164 } from '../model/phone-number';
import type { VoiceModule } from './voice-module';
import { routeUrl, startPath } from './urls';
import { runtimeText } from '../model/texts';

export interface VoiceEnvironmentConfig {
  name?: string;
  phoneNumberSid?: string;
  defaultVoice?: string;
  defaultLanguage?: string;
  speechModel?: string;
  autoDeploy?: boolean;
  validateSignatures?: boolean;
  publicBaseUrl?: string;
  apiUrl?: string;
  callerId?: string;
  callsPerSecond?: number | string;
  sessionStore?: string;
  maxSessions?: number | string;
}

/** `telco-voice-environment`: registers the Environment for its webhooks and with the engine. */
export function voiceEnvironmentNode(voice: VoiceModule, node: RedNode, config: VoiceEnvironmentConfig): void {
  const credentials = node.credentials ?? {};
  const pace = callsPerSecondOf(config.callsPerSecond);
  const env: VoiceEnvironment = {
    id: node.id,
    name: config.name || node.id,
    node,
    phoneNumberSid: (config.phoneNumberSid ?? '').trim(),
    defaultVoice: (config.defaultVoice ?? '').trim(),
    defaultLanguage: (config.defaultLanguage ?? '').trim(),
    speechModel: (config.speechModel ?? '').trim(),
    autoDeploy: config.autoDeploy === true,
    validateSignatures: config.validateSignatures !== false,
    publicBaseUrl: (config.publicBaseUrl ?? '').trim(),
    apiUrl: (config.apiUrl ?? '').trim(),
    callerId: (config.callerId ?? '').trim(),
    callsPerSecond: pace.value,
    credentials: {
      accountSid: (credentials.accountSid ?? '').trim(),
      authToken: (credentials.authToken ?? '').trim(),
      webhookSigningSecret: (credentials.webhookSigningSecret ?? '').trim(),
      token: (credentials.token ?? '').trim(),
    },
  };
  voice.environments.add(env, env.credentials.token || undefined);
  voice.engine.attachEnvironment({
    id: node.id,
    name: env.name,
    moduleKey: 'voice',
    sessionStore: config.sessionStore || undefined,
    maxSessions: Number(config.maxSessions) || 0,
    context: node.context(),
  });

  if (env.credentials.token) {
    const start = routeUrl(env, voice.red.settings.httpNodeRoot, startPath(env.credentials.token));
    node.log(urlLine(voice.red, 'Start', start, !!env.publicBaseUrl));
  } else {
    node.warn(ENVIRONMENT_WARNINGS.noToken(voice.red));
  }
  if (!env.validateSignatures) node.warn(ENVIRONMENT_WARNINGS.signaturesOff(voice.red));
  const { line, lacking } = setUpNeeds(voice.red, env);
  if (line) node.warn(line);
  const missing = lacking.map((field) => ({ field, effect: '' }));
  const restOnly = runtimeText(voice.red, 'voice', 'runtime.log.callsOutRefused');
  const unusable = [accountSidSetting(voice.red, env.credentials.accountSid, restOnly), apiUrlSetting(voice.red, env.apiUrl, restOnly)].filter(
    (u) => u !== undefined,
  );
  voice.engine.noteMissing(env.id, setUpStatus(voice.red, node, missing, unusable));
  if (pace.unusable !== undefined) {
    const said = { value: pace.unusable, max: MAX_CALLS_PER_SECOND, fallback: DEFAULT_CALLS_PER_SECOND };
    node.warn(runtimeText(voice.red, 'voice', 'runtime.log.callsPerSecondUnusable', said));
  }
  if (env.callerId && !isE164(env.callerId)) node.warn(runtimeText(voice.red, 'voice', 'runtime.log.callerIdNotE164', { callerId: env.callerId }));
  void autoDeployVoiceWebhook(voice.red, env);

  node.on('close', (removed, done) => {
    voice.environments.remove(env);
    if (removed) voice.engine.removeEnvironment(env.id);
    done();
  });
}

/**
 * What this Environment lacks for the nodes that use it, said once: Call start answers calls with
 * the credentials; Call out also places them from a Caller ID, its webhooks reached through the
 * Public base URL. An Environment nothing uses yet says what its calls would lack.
 */
function setUpNeeds(red: RED, env: VoiceEnvironment): { line?: string; lacking: string[] } {
  const credentials = missingCredentials(env);
  const users = usersOf(red, env.id);
  const needs: Need[] = [];
  const lacking = [...credentials];
  if (users.some((u) => u.type === 'telco-call-start') || !users.length) {
    needs.push({
      who: runtimeText(red, 'voice', 'telco-call-start.paletteLabel'),
      fields: credentialsField(red, credentials),
      purpose: runtimeText(red, 'voice', 'runtime.log.toAnswerCalls'),
    });
  }
  if (users.some((u) => u.type === 'telco-call-out')) {
    const fields = [
      ...(env.callerId ? [] : [runtimeText(red, 'voice', 'runtime.log.aCallerId')]),
      ...(env.publicBaseUrl ? [] : [runtimeText(red, 'core', 'runtime.environment.publicBaseUrl')]),
      ...credentialsField(red, credentials),
    ];
    if (!env.callerId) lacking.unshift('Caller ID');
    if (!env.publicBaseUrl) lacking.splice(env.callerId ? 0 : 1, 0, 'Public base URL');
    needs.push({ who: runtimeText(red, 'voice', 'telco-call-out.paletteLabel'), fields, purpose: runtimeText(red, 'voice', 'runtime.log.toPlaceCalls') });
  }
  return { line: needsLine(red, needs), lacking };
}
