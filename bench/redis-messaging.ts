import { NodeRed } from '../test/harness/node-red';
import { RedisServer, redisContextSettings } from '../test/harness/redis';
import { RespCounter } from '../test/harness/resp-counter';
import { cpuMicros } from './cpu';
import { CREDS, benchFlows } from './flows';
import { drive, type LoadResult } from './load';
import { deliveredRate, phase, settled } from './measure';
import { inboundSms, userNumber, type MessagingTarget } from './messaging';
import { presigned } from './phases';
import type { RemoteFakes } from './remote-fakes';

export interface RedisMessagingRow extends LoadResult {
  repliesPerSecond: number;
  /** Node-RED CPU per handled message (warm-up included), µs. */
  cpuPerMessageUs: number;
  /** Commands sent to Redis per handled message, counted on the wire. */
  commandsPerMessage: number;
  /** Bytes to and from Redis per handled message. */
  bytesPerMessage: number;
}

export interface RedisMessagingOptions {
  seconds: number;
  warmupSeconds: number;
  connections: number;
  users: number;
}

const PREFIX = '+1555';
const TO = '+15550000000';

/**
 * The messaging Process on one instance whose Sessions are in Redis (a fresh redis-server,
 * reached through a counting relay): each user's first message opens a Session, then signed
 * messages continue them for a measured phase. Commands, bytes and Node-RED CPU are divided by the
 * replies handled since the phase's warm-up began. `packageDir` is the build under benchmark
 * (default: this repository's).
 */
export async function redisMessaging(fakes: RemoteFakes, options: RedisMessagingOptions, name: string, packageDir?: string): Promise<RedisMessagingRow> {
  const redis = await RedisServer.start();
  const counter = new RespCounter(redis.port);
  let red: NodeRed | undefined;
  try {
    await counter.listen();
    red = await NodeRed.start({
      settingsCode: redisContextSettings(`redis://127.0.0.1:${counter.port}`),
      nodeArgs: ['--max-old-space-size=4096'],
      ...(packageDir ? { packageDir } : {}),
    });
    const base = red.url('').replace(/\/$/, '');
    await red.deploy(
      benchFlows(base, fakes.slackUrl, fakes.twilioUrl)
        .filter((n: any) => ['envM', 'tMsg'].includes(n.id) || n.z === 'tMsg')
        .map((n: any) => (n.id === 'envM' ? { ...n, sessionStore: 'shared' } : n)),
    );
    const target: MessagingTarget = { label: 'Redis', token: CREDS.messagingToken, environment: 'envM' };
    const mine = (d: { to: string }) => d.to.startsWith(PREFIX);
    const { users, connections, seconds, warmupSeconds } = options;
    const opened = Date.now();
    const first = await drive(base, { amount: users, connections, next: (i) => inboundSms(base, target, userNumber(PREFIX, i), TO, 'open') });
    if (first.non2xx || first.errors) throw new Error(`opening Sessions on Redis: ${first.non2xx} non-2xx answers, ${first.errors} errors`);
    // A webhook is answered once recorded; its Session opens after: wait until all are live.
    const live = async () => ((await red!.admin('GET', '/channel-sessions/stats')).body as { live: number }).live;
    for (let i = 0; i < 1200 && (await live()) < users; i++) await new Promise((r) => setTimeout(r, 250));
    if ((await fakes.deliveredSince(opened)).some(mine)) throw new Error('a first message was answered: the Sessions were not fresh');
    const next = presigned(Math.ceil((seconds + warmupSeconds) * 6000), (i) => inboundSms(base, target, userNumber(PREFIX, i % users), TO, `hi ${i}`));
    const cpuBefore = cpuMicros(red.pid) ?? 0;
    const commandsBefore = counter.commands;
    const bytesBefore = counter.bytesToRedis + counter.bytesFromRedis;
    const phaseStart = Date.now();
    const run = await phase(`messaging inbound, ${name}`, () => drive(base, { seconds, warmupSeconds, connections, next }));
    await settled(() => fakes.deliveredSince(phaseStart).then((all) => all.filter(mine).length));
    const repliesPerSecond = await deliveredRate(fakes, run, mine);
    const handled = Math.max(1, (await fakes.deliveredSince(phaseStart)).filter(mine).length);
    const row: RedisMessagingRow = {
      ...run,
      repliesPerSecond,
      cpuPerMessageUs: ((cpuMicros(red.pid) ?? 0) - cpuBefore) / handled,
      commandsPerMessage: (counter.commands - commandsBefore) / handled,
      bytesPerMessage: (counter.bytesToRedis + counter.bytesFromRedis - bytesBefore) / handled,
    };
    process.stdout.write(
      `  ${Math.round(repliesPerSecond)} replies/s, ${Math.round(row.cpuPerMessageUs)} µs of Node-RED CPU, ${row.commandsPerMessage.toFixed(2)} Redis commands and ${Math.round(row.bytesPerMessage)} bytes per message\n`,
    );
    return row;
  } finally {
    await red?.close();
    await counter.close();
    await redis.close();
  }
}
