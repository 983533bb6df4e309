import { hidePathToken, originForLog } from '../http/shown-secrets';
import { TaskError } from '../model/errors';
import type { RED } from '../model/red';
import { runtimeText } from '../model/texts';
import { displayName, INBOUND_PATH, inboundUrl, type MessagingEnvironment } from './environment';
import { providerClient, providerError } from './provider-client';

export type AutoDeployOutcome = { kind: 'skipped' | 'set' | 'replaced'; message: string } | { kind: 'refused' | 'failed'; message: string; code: number };

const MG_SID = /^MG[0-9A-Za-z]{32}$/;

/**
 * On deploy: point the Messaging Service's Inbound Request URL at this Environment's inbound
 * endpoint and turn off its use-webhook-on-number option. Another Environment's
 * messaging endpoint is never overwritten.
 */
export async function autoDeploy(red: RED, env: MessagingEnvironment, httpNodeRoot: string | undefined): Promise<AutoDeployOutcome> {
  const name = displayName(env);
  const sid = env.config.messagingServiceSid;
  const named = { name, sid };
  if (!MG_SID.test(sid)) {
    return {
      kind: 'skipped',
      message: sid
        ? runtimeText(red, 'messaging', 'runtime.log.autoDeploySkippedSid', named)
        : runtimeText(red, 'messaging', 'runtime.log.autoDeploySkippedNoSid', named),
    };
  }
  const ours = inboundUrl(env, httpNodeRoot);
  if (!ours) {
    return {
      kind: 'skipped',
      message: env.credentials.token
        ? runtimeText(red, 'messaging', 'runtime.log.autoDeploySkippedBase', named)
        : runtimeText(red, 'messaging', 'runtime.log.autoDeploySkippedBaseToken', named),
    };
  }
  let client;
  try {
    client = providerClient(env);
  } catch (err) {
    const error = err as TaskError;
    return {
      kind: 'failed',
      code: error.code ?? 4008,
      message: runtimeText(red, 'messaging', 'runtime.log.autoDeployFailed', { ...named, message: error.message }),
    };
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
        message: runtimeText(red, 'messaging', 'runtime.log.autoDeployRefused', { ...named, current: hidePathToken(current, 'inbound') }),
      };
    }
    await service.update({ inboundRequestUrl: ours, inboundMethod: 'POST', useInboundWebhookOnNumber: false });
    if (current && !isOurs) {
      // Another system's URL: its origin says whose it was, and its path or query may hold its secret.
      const shown = originForLog(current);
      return { kind: 'replaced', message: runtimeText(red, 'messaging', 'runtime.log.autoDeployReplaced', { ...named, current: shown, url: ours }) };
    }
    return { kind: 'set', message: runtimeText(red, 'messaging', 'runtime.log.autoDeploySet', { ...named, url: ours }) };
  } catch (err) {
    const error = providerError(err, `the Messaging Service ${sid} update`);
    return { kind: 'failed', code: error.code, message: runtimeText(red, 'messaging', 'runtime.log.autoDeployFailed', { ...named, message: error.message }) };
  }
}

function pathOf(url: string): string {
  try {
    return new URL(url).pathname;
  } catch {
    return url;
  }
}
