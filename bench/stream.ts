import { NodeRed, eventually } from '../test/harness/node-red';
import { node, tab } from '../test/harness/flows';
import { FakeSlack } from '../test/fakes/slack-api';
import { SlackEvents } from '../test/fakes/slack-events';
import { SIGNING_SECRET, teamchatEnvironment } from '../test/fakes/slack-flows';
import { cpuMicros } from './cpu';
import { modelInParts } from '../test/harness/model-parts';

/** Answers streaming at once in one workspace, the parts each model writes, and the time between two parts. */
const ANSWERS = 20;
const PARTS = 30;
const PART_MS = 1000;
/** Slack's tiers for the stream methods, per app and workspace (calls a minute). */
/** How long the runtime's CPU at rest is measured before the answers. */
const IDLE_MS = 5000;
const TIERS = { 'chat.startStream': 20, 'chat.appendStream': 100, 'chat.stopStream': 20 };

/** Part `i` of the answer to `question`: about 30 characters, each part different, so a lost or repeated one shows. */
const partText = (question: string, i: number) => `${question}#${String(i).padStart(2, '0')} words of the answer. `;

/** A model writing its answer in PARTS parts, one every PART_MS (`msg.partial` on all but the last). */
const MODEL = modelInParts(`Array.from({ length: ${PARTS} }, (_, i) => msg.payload + '#' + String(i).padStart(2, '0') + ' words of the answer. ')`, PART_MS);

/**
 * `npm run bench -- --only=stream`: Stream reply under Slack's limits. ANSWERS people in one
 * workspace ask at the same moment; each answer is written in PARTS parts, one a second, and
 * streamed into its DM thread against the fake Slack API enforcing the stream methods' tiers
 * (Tier 2 for startStream and stopStream, Tier 4 for appendStream: 429 with Retry-After past
 * them). It reports the appends a second the workspace sustained, the 429s, how long after its
 * last part each answer was finished, whether every answer reads exactly as written (no character
 * lost or repeated), and the Node-RED CPU per streamed part.
 */
async function main(): Promise<void> {
  const fake = await FakeSlack.start();
  fake.tiers = TIERS;
  const red = await NodeRed.start();
  try {
    const z = 'benchStreamTab';
    const token = 'tokbenchstreamBBBBBBBBBBBBBBBBBBBB';
    await red.deploy([
      tab(z, 'Stream bench'),
      teamchatEnvironment('benchStreamEnv', token, fake),
      node('teamchat-start', 'benchStreamStart', z, { environment: 'benchStreamEnv', variable: 'teamchat' }, [['benchModel']]),
      node('function', 'benchModel', z, { func: MODEL, outputs: 1 }, [['benchStream']]),
      node('teamchat-stream', 'benchStream', z, {}, [['benchRate'], []]),
      node('input-task', 'benchRate', z, { prompt: '', resultVariable: 'rating' }, [[], []]),
    ]);
    const slack = new SlackEvents(red, token, SIGNING_SECRET, fake.team);
    process.stdout.write(`… Stream reply: ${ANSWERS} answers at once in one workspace, ${PARTS} parts each, one every ${PART_MS} ms, Slack's tiers enforced\n`);
    const asks = Array.from({ length: ANSWERS }, (_, i) => {
      const user = `U${String(i + 1).padStart(4, '0')}B`;
      return slack.direct(user, `q${i + 1}`, { channel: `D${String(i + 1).padStart(4, '0')}BENCH` });
    });
    // The runtime's own CPU at rest (timers, the store's sweep), to tell from what the answers cost.
    const idleFrom = cpuMicros(red.pid);
    await new Promise((r) => setTimeout(r, IDLE_MS));
    const idleUsPerSecond = idleFrom !== undefined ? ((cpuMicros(red.pid) ?? idleFrom) - idleFrom) / (IDLE_MS / 1000) : undefined;
    const cpuBefore = cpuMicros(red.pid);
    const started = Date.now();
    const answered = await Promise.all(asks.map((event) => slack.post(slack.envelope(event))));
    if (answered.some((r) => r.status !== 200)) throw new Error(`Slack's events were refused: ${answered.map((r) => r.status).join(',')}`);
    // The last part of every answer is written PARTS - 1 seconds after its question.
    const written = started + (PARTS - 1) * PART_MS;
    await eventually(
      () => {
        const stopped = new Set(fake.callsOf('chat.stopStream').map((c) => c.body.ts));
        return fake.callsOf('chat.startStream').filter((c) => c.result?.ok && !stopped.has(c.result.ts)).length === 0 &&
          new Set([...fake.streams.values()].map((s) => s.threadTs)).size === ANSWERS
          ? true
          : undefined;
      },
      PARTS * PART_MS + 120_000,
      'every answer to be finished',
    );
    const cpu = cpuMicros(red.pid);
    const appends = fake.callsOf('chat.appendStream');
    const ok = appends.filter((c) => c.result?.ok);
    const limited = fake.attempts.filter((a) => a.fault && 'status' in a.fault && a.fault.status === 429);
    // Each answer as the person reads it: its streamed messages in order, against what its model wrote.
    let exact = 0;
    let lost = 0;
    let repeated = 0;
    const lags: number[] = [];
    for (const ask of asks) {
      const streams = fake.callsOf('chat.startStream').filter((c) => c.result?.ok && c.body.thread_ts === ask.ts);
      const shown = streams.map((c) => fake.streamText(c.result!.ts)).join('');
      const wrote = Array.from({ length: PARTS }, (_, i) => partText(String(ask.text), i)).join('');
      if (shown === wrote) exact++;
      lost += Math.max(0, wrote.length - shown.length);
      repeated += Math.max(0, shown.length - wrote.length);
      const stops = fake.callsOf('chat.stopStream').filter((c) => streams.some((s) => s.result!.ts === c.body.ts));
      lags.push(Math.max(...stops.map((c) => c.at)) - written);
    }
    const span = (ok[ok.length - 1].at - ok[0].at) / 1000;
    const parts = ANSWERS * PARTS;
    const result = {
      answers: ANSWERS,
      parts,
      appends: ok.length,
      appendsPerSecond: Math.round((ok.length / span) * 100) / 100,
      starts: fake.callsOf('chat.startStream').length,
      stops: fake.callsOf('chat.stopStream').length,
      http429: limited.length,
      exactAnswers: exact,
      lostCharacters: lost,
      repeatedCharacters: repeated,
      finishedAfterLastPartMs: { min: Math.min(...lags), max: Math.max(...lags) },
      cpuPerPartUs: cpuBefore !== undefined && cpu !== undefined ? Math.round((cpu - cpuBefore) / parts) : undefined,
      idleCpuUsPerSecond: idleUsPerSecond === undefined ? undefined : Math.round(idleUsPerSecond),
      seconds: Math.round((Date.now() - started) / 100) / 10,
    };
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  } finally {
    await red.close();
    await fake.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
