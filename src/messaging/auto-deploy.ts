import { TaskError } from '../model/errors';
import { displayName, INBOUND_PATH, inboundUrl, type MessagingEnvironment } from './environment';
import { providerClient, providerError } from './provider-client';

export type AutoDeployOutcome = { kind: 'skipped' | 'set' | 'replaced'; message: string } | { kind: 'refused' | 'failed'; message: string; code: number };

const MG_SID = /^MG[0-9A-Za-z]{32}$/;

/**
 * On deploy: point the Messaging Service's Inbound Request URL at this Environment's inbound
 * endpoint and turn off its use-webhook-on-number option. Another Environment's
 * messaging endpoint is never overwritten.
 */
export async function autoDeploy(env: MessagingEnvironment, httpNodeRoot: string | undefined): Promise<AutoDeployOutcome> {
  const name = displayName(env);
  const sid = env.config.messagingServiceSid;
  if (!MG_SID.test(sid)) {
    return { kind: 'skipped', message: `Auto-deploy skipped for "${name}": the Messaging Service SID ${sid ? `"${sid}" does not begin with MG` : 'is empty'}` };
  }
  const ours = inboundUrl(env, httpNodeRoot);
  if (!ours) {
    return {
      kind: 'skipped',
      message: `Auto-deploy skipped for "${name}": no public base URL${env.credentials.token ? '' : ' or token'}, so no inbound URL can be built`,
    };
  }
  let client;
  try {
    client = providerClient(env);
  } catch (err) {
    const error = err as TaskError;
    return { kind: 'failed', code: error.code ?? 4008, message: `Auto-deploy for "${name}" failed: ${error.message}` };
  }
  try {
    const service = client.messaging.v1.services(sid);
    const current = (await service.fetch()).inboundRequestUrl ?? '';
    const token = env.credentials.token as string;
    const isOurs = current === ours || pathOf(current).endsWith(INBOUND_PATH + token);
    if (current && !isOurs && pathOf(current).includes(INBOUND_PATH)) {
      return {
        kind: 'refused',
        code: 4001,
        message: `Auto-deploy for "${name}" refused: Messaging Service ${sid} already sends to another Environment's messaging endpoint (${redact(current)}). Use one Messaging Service per Environment, or turn auto-deploy off in the other Environment and clear its URL first.`,
      };
    }
    await service.update({ inboundRequestUrl: ours, inboundMethod: 'POST', useInboundWebhookOnNumber: false });
    if (current && !isOurs) {
      return {
        kind: 'replaced',
        message: `Auto-deploy for "${name}": Messaging Service ${sid} Inbound Request URL ${redact(current)} replaced by ${ours}; inbound messages on its numbers now start Sessions here`,
      };
    }
    return { kind: 'set', message: `Auto-deploy for "${name}": Messaging Service ${sid} Inbound Request URL set to ${ours}` };
  } catch (err) {
    const error = providerError(err, `the Messaging Service ${sid} update`);
    return { kind: 'failed', code: error.code, message: `Auto-deploy for "${name}" failed: ${error.message}` };
  }
}

function pathOf(url: string): string {
  try {
    return new URL(url).pathname;
  } catch {
    return url;
  }
}

/** The token in an inbound URL is a credential: logs show only its first characters. */
export function redact(url: string): string {
  return url.replace(/(\/inbound\/)([^/?#]{4})[^/?#]*/, '$1$2…');
}
