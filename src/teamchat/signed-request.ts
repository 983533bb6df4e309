import { BodyTooLarge, readRawBody } from '../http/raw-body';
import type { RefusalLog } from '../http/refusal-log';
import type { HttpRequest, HttpResponse, RED } from '../model/red';
import { runtimeText } from '../model/texts';
import type { TeamChatEnvironment } from './environment';
import { isSignedBySlack } from './signature';

/**
 * The raw body of a request Slack signed, or undefined once it has answered: 401 (empty body, as
 * Bolt does) for a missing, wrong or stale signature, logged at most once a minute; 413 or 400 when
 * the body cannot be read.
 */
export async function readSignedBody(
  red: RED,
  req: HttpRequest,
  res: HttpResponse,
  env: TeamChatEnvironment,
  refusals: RefusalLog,
  what: 'event' | 'interactivity',
): Promise<Buffer | undefined> {
  let raw: Buffer;
  try {
    raw = await readRawBody(req);
  } catch (err) {
    if (!res.headersSent) res.status(err instanceof BodyTooLarge ? 413 : 400).end();
    return undefined;
  }
  const signature = req.headers['x-slack-signature'];
  const timestamp = req.headers['x-slack-request-timestamp'];
  if (typeof signature !== 'string' || typeof timestamp !== 'string' || !isSignedBySlack(raw, signature, timestamp, env.signingSecret)) {
    const line =
      what === 'event'
        ? runtimeText(red, 'teamchat', 'runtime.log.eventSignatureRefused')
        : runtimeText(red, 'teamchat', 'runtime.log.interactivitySignatureRefused');
    refusals.report(`${env.id}/${what}`, (said) => env.node.warn(said), line);
    res.status(401).end();
    return undefined;
  }
  return raw;
}

/** Slack's retry count from `X-Slack-Retry-Num` (0 on a first delivery). */
export function retryNumOf(req: HttpRequest): number {
  const header = req.headers['x-slack-retry-num'];
  return Number(Array.isArray(header) ? header[0] : header) || 0;
}
