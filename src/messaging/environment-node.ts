import type { EnvironmentNote } from '../engine/engine';
import {
  apiUrlSetting,
  credentialsField,
  ENVIRONMENT_WARNINGS,
  needsLine,
  downstreamOf,
  setUpStatus,
  urlLine,
  usersOf,
  type MissingCredential,
  type Need,
} from '../kit/environment-warnings';
import { accountSidSetting } from '../telco/twilio-account';
import type { RED, RedNode } from '../model/red';
import { runtimeText } from '../model/texts';
import { autoDeploy, type AutoDeployOutcome } from './auto-deploy';
import type { MessagingModule } from './messaging-module';
import { displayName, INBOUND_PATH, inboundUrl, MODULE_KEY, readConfig, type MessagingEnvironment } from './environment';

/**
 * `telco-messaging-environment`: attaches to the engine, makes its token reachable by the inbound
 * route, logs the inbound URL and, with auto-deploy, registers it on the Messaging Service.
 */
export function environmentNode(red: RED, messaging: MessagingModule, node: RedNode, raw: Record<string, unknown>): void {
  const { engine } = messaging;
  const config = readConfig(raw);
  const env: MessagingEnvironment = { id: node.id, node, config, credentials: { ...(node.credentials ?? {}) } };
  engine.attachEnvironment({
    id: node.id,
    name: displayName(env),
    moduleKey: MODULE_KEY,
    sessionStore: config.sessionStore,
    maxSessions: config.maxSessions,
    context: node.context(),
  });
  messaging.environments.add(env, env.credentials.token);
  node.on('close', (removed, done) => {
    messaging.environments.remove(env);
    if (removed) engine.removeEnvironment(env.id);
    done();
  });

  const root = red.settings.httpNodeRoot as string | undefined;
  if (!env.credentials.token) {
    node.warn(ENVIRONMENT_WARNINGS.noToken(red));
  } else {
    const url = inboundUrl(env, root);
    node.log(urlLine(red, 'Inbound', url ?? joinRoot(root, INBOUND_PATH + env.credentials.token), !!url));
  }
  if (!config.validateSignatures) {
    node.warn(ENVIRONMENT_WARNINGS.signaturesOff(red));
  }
  const missing = missingMessagingCredentials(red, env);
  const line = setUpNeeds(red, env, missing);
  if (line) node.warn(line);
  const cannotSend = runtimeText(red, 'messaging', 'runtime.log.cannotSend');
  const unusable = [accountSidSetting(red, env.credentials.accountSid?.trim() ?? '', cannotSend), apiUrlSetting(red, config.apiUrl, cannotSend)].filter(
    (u) => u !== undefined,
  );
  engine.noteMissing(env.id, setUpStatus(red, node, missing, unusable));
  if (config.autoDeploy) {
    void autoDeploy(red, env, root).then((outcome) => {
      if (outcome.kind === 'refused' || outcome.kind === 'failed')
        node.error(runtimeText(red, 'messaging', 'runtime.log.autoDeployError', { code: outcome.code, message: outcome.message }));
      else if (outcome.kind === 'replaced') node.warn(outcome.message);
      else node.log(outcome.message);
      engine.noteEnvironment(env.id, autoDeployNote(red, outcome));
    });
  }
}

function joinRoot(root: string | undefined, path: string): string {
  const trimmed = (root ?? '/').replace(/\/+$/, '');
  return trimmed + path;
}

/** How each auto-deploy outcome shows on the Environment's start nodes. */
function autoDeployNote(red: RED, outcome: AutoDeployOutcome): EnvironmentNote {
  const code = 'code' in outcome ? outcome.code : 4001;
  switch (outcome.kind) {
    case 'set':
      return { fill: 'green', text: runtimeText(red, 'messaging', 'runtime.status.inboundUrlSet') };
    case 'replaced':
      return { fill: 'yellow', text: runtimeText(red, 'messaging', 'runtime.status.inboundUrlReplaced') };
    case 'skipped':
      return { fill: 'yellow', text: runtimeText(red, 'messaging', 'runtime.status.autoDeploySkipped') };
    case 'refused':
      return { fill: 'red', text: runtimeText(red, 'messaging', 'runtime.status.autoDeployRefused', { code }) };
    case 'failed':
      return { fill: 'red', text: runtimeText(red, 'messaging', 'runtime.status.autoDeployFailed', { code }) };
  }
}

/**
 * What this Environment lacks for the nodes that use it, said once: its starts take messages (the
 * Auth Token checks them) and answer them, Text out sends, both with the credentials. Without a
 * Public base URL no message asks for its statuses (reach.ts statusCallbackUrl), so a Task waiting
 * for the answer to an undelivered one never takes its error branch, and files cannot be linked;
 * said only when such Tasks follow its starts or Text out. An Environment nothing uses yet
 * says what it lacks as its starts would.
 */
function setUpNeeds(red: RED, env: MessagingEnvironment, missing: MissingCredential[]): string | undefined {
  const credentials = credentialsField(
    red,
    missing.map((m) => m.field),
  );
  const refused = missing.some((m) => Array.isArray(m.effect));
  const users = usersOf(red, env.id);
  const text = (key: string) => runtimeText(red, 'messaging', key);
  const needs: Need[] = [];
  const starts = users.filter((u) => u.type === 'telco-sms-start' || u.type === 'telco-messenger-start' || !users.length);
  for (const start of starts) {
    const who = runtimeText(red, 'messaging', `${start.type === 'telco-messenger-start' ? 'telco-messenger-start' : 'telco-sms-start'}.paletteLabel`);
    needs.push({ who, fields: credentials, purpose: text(refused ? 'runtime.log.toTakeAndAnswer' : 'runtime.log.toAnswer') });
  }
  if (!users.length) needs.splice(1);
  if (users.some((u) => u.type === 'telco-message-out')) {
    needs.push({ who: runtimeText(red, 'messaging', 'telco-message-out.paletteLabel'), fields: credentials, purpose: text('runtime.log.toSend') });
  }
  if (!env.config.publicBaseUrl) {
    const tasks = downstreamOf(
      red,
      users.map((u) => u.id),
    );
    const base = [runtimeText(red, 'core', 'runtime.environment.publicBaseUrl')];
    if (tasks.some((t) => t.type === 'input-task' || t.type === 'telco-messenger-buttons')) {
      needs.push({ who: text('runtime.log.waitingTasks'), plural: true, fields: base, purpose: text('runtime.log.toHearUndelivered') });
    }
    if (tasks.some((t) => typeof t.attachments === 'string' && t.attachments.trim())) {
      needs.push({ who: text('runtime.log.fileTasks'), plural: true, fields: base, purpose: text('runtime.log.toLinkFiles') });
    }
  }
  return needsLine(red, needs);
}

/** What this Environment lacks for Twilio: Account SID and Auth Token send messages; the Auth Token (or a Webhook Signing Secret) checks inbound ones. */
function missingMessagingCredentials(red: RED, env: MessagingEnvironment): MissingCredential[] {
  const missing: MissingCredential[] = [];
  const cannotSend = runtimeText(red, 'messaging', 'runtime.log.cannotSend');
  if (!env.credentials.accountSid?.trim()) missing.push({ field: 'Account SID', effect: cannotSend });
  if (!env.credentials.authToken?.trim()) {
    missing.push({
      field: 'Auth Token',
      effect: env.credentials.webhookSigningSecret ? cannotSend : [cannotSend, runtimeText(red, 'messaging', 'runtime.log.inboundRefused')],
    });
  }
  return missing;
}
