import { readFileSync } from 'node:fs';
import { NodeRed } from '../test/harness/node-red';
import { RandomProxy } from '../test/harness/proxy';
import { RedisServer, redisContextSettings } from '../test/harness/redis';
import { CREDS, benchFlows } from './flows';
import { drive, type LoadResult } from './load';
import { RespCounter } from '../test/harness/resp-counter';
import { deliveredRate, phase, settled } from './measure';
import { presigned } from './phases';
import { RemoteFakes } from './remote-fakes';
import { twilioForm } from './signing';
import { writeResults } from './report';

/**
 * `npm run bench -- --only=cluster [--quick]`: messaging webhooks (record, acknowledge, reply) on
 * one instance with the embedded store, then on Redis, then two instances on Redis behind a proxy
 * that spreads requests at random. Every phase goes through the same proxy, so the ratios compare
 * stores and instance counts, not the proxy. Redis commands are counted on the wire
 * (resp-counter.ts); CPU is read from /proc for the Node-RED processes only.
 */
const quick = process.argv.includes('--quick');
const SECONDS = quick ? 3 : 10;
const WARMUP = quick ? 1 : 2;
const CONNECTIONS = 32;
/** Each user's first message opens their Session without a reply; every phase is primed so it measures continuing Sessions (message in, reply out). */
const USERS = 500;
const POOL = 60000;
const INBOUND = `/api/TelcoModule/Messaging/inbound/${CREDS.messagingToken}`;

interface PhaseResult extends LoadResult {
  repliesPerSecond: number;
  replies: number;
  cpuMsPerMessage: number;
  redisCommandsPerMessage?: number;
  /** Bytes to and from Redis per handled message (each way summed). */
  redisBytesPerMessage?: number;
}

async function main(): Promise<void> {
  const fakes = await RemoteFakes.start();
  const redis = await RedisServer.start();
  const counter = new RespCounter(redis.port);
  await counter.listen();
  const settingsCode = redisContextSettings(`redis://127.0.0.1:${counter.port}`);
  const reds: NodeRed[] = [];
  const proxy = new RandomProxy([]);
  await proxy.listen();
  const publicBase = proxy.url('').replace(/\/$/, '');
  const flows = (sessionStore: string) =>
    benchFlows(publicBase, fakes.slackUrl, fakes.twilioUrl)
      .filter((n: any) => ['envM', 'tMsg'].includes(n.id) || n.z === 'tMsg')
      .map((n: any) => (n.id === 'envM' ? { ...n, sessionStore } : n));
  let sid = 0;
  const requests = () =>
    presigned(POOL, (i) => {
      // Signed for the URL the provider calls: the proxy's, with the Host header it keeps.
      const form = twilioForm(CREDS.authToken, publicBase + INBOUND, {
        AccountSid: CREDS.accountSid,
        MessageSid: `SM${(sid++).toString(16).padStart(32, '0')}`,
        From: `+1555${(i % USERS).toString().padStart(7, '0')}`,
        To: '+15550000000',
        Body: `hi ${i}`,
        NumMedia: '0',
      });
      return { method: 'POST', path: INBOUND, headers: form.headers, body: form.body };
    });
  /** One message from every user, so each has a waiting Session in the store under test. */
  const prime = async () => {
    const next = requests();
    await drive(publicBase, { amount: USERS, connections: CONNECTIONS, next });
    await settled(() => fakes.deliveredSince(0).then((all) => all.length));
  };
  const measure = async (name: string, counting: boolean): Promise<PhaseResult> => {
    const next = requests();
    const cpuBefore = reds.map(cpuMs);
    const commandsBefore = counter.commands;
    const bytesBefore = counter.bytesToRedis + counter.bytesFromRedis;
    const run = await phase(name, () => drive(publicBase, { seconds: SECONDS, warmupSeconds: WARMUP, connections: CONNECTIONS, next }));
    // Acknowledged messages may still be queued when the load stops: wait until every reply is out.
    const phaseStart = run.started - WARMUP * 1000 - 500;
    await settled(() => fakes.deliveredSince(phaseStart).then((all) => all.length));
    const repliesPerSecond = await deliveredRate(fakes, run, (d) => d.to.startsWith('+1555'));
    const replies = (await fakes.deliveredSince(run.started)).filter((d) => d.to.startsWith('+1555')).length;
    // Warm-up requests are handled too: CPU and commands are divided by every message handled since the phase began.
    const handled = Math.max(1, (await fakes.deliveredSince(phaseStart)).filter((d) => d.to.startsWith('+1555')).length);
    const cpu = reds.map(cpuMs).reduce((sum, v, i) => sum + v - cpuBefore[i], 0);
    const result: PhaseResult = { ...run, repliesPerSecond, replies, cpuMsPerMessage: cpu / handled };
    if (counting) {
      result.redisCommandsPerMessage = (counter.commands - commandsBefore) / handled;
      result.redisBytesPerMessage = (counter.bytesToRedis + counter.bytesFromRedis - bytesBefore) / handled;
    }
    process.stdout.write(
      `  ${Math.round(repliesPerSecond)} replies/s, CPU ${result.cpuMsPerMessage.toFixed(2)} ms/message${counting ? `, ${result.redisCommandsPerMessage!.toFixed(1)} Redis commands and ${Math.round(result.redisBytesPerMessage!)} bytes/message` : ''}\n`,
    );
    return result;
  };

  const rows: Record<string, PhaseResult> = {};
  try {
    reds.push(await NodeRed.start({ settingsCode, nodeArgs: ['--max-old-space-size=4096'] }));
    proxy.setBackends([{ name: 'a', port: reds[0].port }]);
    await reds[0].deploy(flows(''));
    await prime();
    rows.embedded = await measure('one instance, embedded store (SQLite)', false);
    await reds[0].deploy(flows('shared'));
    await prime();
    rows.redisOne = await measure('one instance, Redis', true);
    reds.push(await NodeRed.start({ settingsCode, nodeArgs: ['--max-old-space-size=4096'] }));
    await reds[1].deploy(flows('shared'));
    proxy.setBackends(reds.map((red, i) => ({ name: 'ab'[i], port: red.port })));
    rows.redisTwo = await measure('two instances, Redis, requests spread at random', true);
  } finally {
    await proxy.close();
    for (const red of reds) await red.close();
    await counter.close();
    await redis.close();
    await fakes.stop();
  }
  report(rows);
}

/** User + system CPU time of a running process, in ms (Linux /proc; 0 elsewhere). */
function cpuMs(red: NodeRed): number {
  try {
    const fields = readFileSync(`/proc/${red.pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // utime + stime, in USER_HZ (100)
  } catch {
    return 0;
  }
}

function report(rows: Record<string, PhaseResult>): void {
  const ratio = (a: number, b: number) => Math.round((a / b) * 100) / 100;
  const table = [
    { figure: 'webhooks/s, one instance: Redis / embedded', value: ratio(rows.redisOne.requestsPerSecond, rows.embedded.requestsPerSecond), target: '>= 0.6' },
    { figure: 'replies/s, one instance: Redis / embedded', value: ratio(rows.redisOne.repliesPerSecond, rows.embedded.repliesPerSecond), target: 'info' },
    { figure: 'Redis commands per handled message (one instance)', value: Math.round(rows.redisOne.redisCommandsPerMessage! * 10) / 10, target: 'report' },
    { figure: 'Redis commands per handled message (two instances)', value: Math.round(rows.redisTwo.redisCommandsPerMessage! * 10) / 10, target: 'report' },
    { figure: 'Redis bytes moved per handled message (one instance)', value: Math.round(rows.redisOne.redisBytesPerMessage!), target: 'report' },
    { figure: 'Redis bytes moved per handled message (two instances)', value: Math.round(rows.redisTwo.redisBytesPerMessage!), target: 'report' },
    {
      figure: 'webhooks/s, Redis: two instances / one',
      value: ratio(rows.redisTwo.requestsPerSecond, rows.redisOne.requestsPerSecond),
      target: 'report (2 cores)',
    },
    {
      figure: 'replies/s, Redis: two instances / one',
      value: ratio(rows.redisTwo.repliesPerSecond, rows.redisOne.repliesPerSecond),
      target: 'report (2 cores)',
    },
    { figure: 'Node-RED CPU ms per message: embedded, one instance', value: Math.round(rows.embedded.cpuMsPerMessage * 100) / 100, target: 'report' },
    { figure: 'Node-RED CPU ms per message: Redis, one instance', value: Math.round(rows.redisOne.cpuMsPerMessage * 100) / 100, target: 'report' },
    { figure: 'Node-RED CPU ms per message: Redis, two instances (sum)', value: Math.round(rows.redisTwo.cpuMsPerMessage * 100) / 100, target: 'report' },
  ];
  writeResults(quick ? 'cluster-quick' : 'cluster', table, rows, quick);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
