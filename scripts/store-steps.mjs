// `node scripts/store-steps.mjs [sqlite|memory] [messages] [users] [dist dir]` (after `npm run build`,
// on the Node of the devDependencies: node_modules/.bin/node): the CPU one messaging step costs in
// the Session store alone, called as the conversation worker calls it (record, claim and next,
// liveSession unless the claim read it, commit, then release when idle; in separate calls on a store without claimNext and
// releaseIfIdle, and a last look after the release), 32 conversations at a time so group commit batches as under load. The
// messaging bench counts this inside 250-300 µs per message, with HTTP, the flow and the reply;
// here it is measured without them, so a change of the store reads clearly on a shared machine.
// HISTORY=<lines> (default 20): the history each Session has when the run starts; LOG=<entries>
// (default 0) its log (the statuses of the messages it sent). A build of an older version (the
// history or the log inside the record) may be given as the dist dir, to compare.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const [kind = 'sqlite', messagesArg = '40000', usersArg = '2000', distArg] = process.argv.slice(2);
const dist = resolve(distArg ?? join(dirname(fileURLToPath(import.meta.url)), '..', 'dist'));
const require = createRequire(import.meta.url);
const { SqliteStore } = require(join(dist, 'stores/sqlite/sqlite-store.js'));
const { MemoryStore } = require(join(dist, 'stores/memory/memory-store.js'));
const { DatabaseSync } = require('node:sqlite');
const { SESSION_FORMAT } = require(join(dist, 'model/session.js'));
/** Whether this build keeps the history apart from the record (format 2), and the log too (format 3). */
const apart = SESSION_FORMAT >= 2;
const logApart = SESSION_FORMAT >= 3;

const LANES = 32;
/** History lines a Session has when the run starts (each step adds two, as the bench's Process does). */
const HISTORY_AT_START = Number(process.env.HISTORY ?? 20);
/** Log entries a Session has when the run starts (a message's statuses write one each; the steps here add none). */
const LOG_AT_START = Number(process.env.LOG ?? 0);
const messages = Number(messagesArg);
const users = Number(usersArg);
const env = 'envM';
const dir = mkdtempSync(join(tmpdir(), 'cs-store-steps-'));
const log = { warn() {}, error: console.error };
// The memory store as the bench runs it: copied to a Node-RED `memory` context store at each step.
const context = new Map();
const mirror = {
  context: { get: (k, s, cb) => cb(null, context.get(k)), set: (k, v, s, cb) => cb(null, context.set(k, v)), keys: (s, cb) => cb(null, [...context.keys()]) },
  storeName: 'memory',
  log,
};
const store =
  kind === 'sqlite' ? new SqliteStore(DatabaseSync, { path: join(dir, 'channel-sessions.db'), synchronous: 'NORMAL', log }) : new MemoryStore('memory', mirror);

let sid = 0;
const number = (u) => `+1555${String(u).padStart(7, '0')}`;
const refOf = (u) => ({ environment: env, conversation: `${number(u)}:+15550000000` });
function form(u, text) {
  return {
    AccountSid: `AC${'a'.repeat(32)}`,
    MessageSid: `SM${(++sid).toString(16).padStart(32, '0')}`,
    From: number(u),
    To: '+15550000000',
    Body: text,
    NumMedia: '0',
    NumSegments: '1',
    SmsStatus: 'received',
    ApiVersion: '2010-04-01',
  };
}
function opened(u) {
  const now = Date.now();
  const history = Array.from({ length: HISTORY_AT_START }, (_, h) => ({
    at: now,
    from: h % 2 ? 'bot' : 'user',
    text: h % 2 ? `You said: hi ${h}` : `hi ${h}`,
  }));
  const log = Array.from({ length: LOG_AT_START }, (_, i) => ({
    at: now,
    level: 'info',
    message: `message SM${String(i).padStart(32, '0')} to ${number(u)}: delivered`,
  }));
  return {
    id: `s${u.toString(16).padStart(23, '0')}`,
    channel: 'TelcoMessagingSms',
    environment: env,
    process: 'flow1',
    key: refOf(u).conversation,
    isTest: false,
    vars: { execution: { channel: 'TelcoMessagingSms', channelSender: number(u), channelRecipient: '+15550000000', sessionId: `s${u}` }, variable: 'open' },
    binding: { from: number(u), to: '+15550000000' },
    // The current format keeps the history apart (appended by the commit); format 1 inside the record.
    ...(apart ? { v: 2, historyLines: history.length, newHistory: history } : { history }),
    ...(logApart ? { v: 3, logLines: log.length, newLog: log } : { log }),
    created: now,
    lastActivity: now,
    state: 'waiting',
    waitingAt: { nodeId: 'input1', nodeType: 'input-task', since: now },
  };
}

/** The bytes and calls this process has written and read so far (Linux's /proc/self/io), else undefined. */
function io() {
  try {
    return Object.fromEntries(
      readFileSync('/proc/self/io', 'utf8')
        .trim()
        .split('\n')
        .map((line) => line.split(': '))
        .map(([key, value]) => [key, Number(value)]),
    );
  } catch {
    return undefined;
  }
}

/** One message, as the conversation worker and the step handle it. */
async function step(u, n) {
  const ref = refOf(u);
  const payload = form(u, `hi ${n}`);
  await store.record({ ...ref, kind: 'sms', payload, dedupe: { key: `sms:${payload.MessageSid}`, ttlMs: 86_400_000 } });
  const { lease, item, live } = store.claimNext
    ? await store.claimNext(ref, 'bench', 30_000)
    : { lease: await store.claim(ref, 'bench', 30_000), item: await store.next(ref) };
  // As the worker does: the Session the claim read with the item, else read now.
  const session = live ? live.session : await store.liveSession(ref);
  const now = Date.now();
  const said = [
    { at: now, from: 'user', text: item.payload.Body },
    { at: now, from: 'bot', text: `You said: ${item.payload.Body}` },
  ];
  if (apart) {
    session.newHistory = said;
    session.historyLines += said.length;
  } else {
    session.history.push(...said);
    if (session.history.length > 200) session.history.splice(0, session.history.length - 200);
  }
  session.vars.variable = item.payload.Body;
  session.lastActivity = now;
  session.waitingAt = { nodeId: 'input1', nodeType: 'input-task', since: now };
  await store.commit({ lease, consumed: item.seq, session, timers: [{ kind: 'expire', due: now + 86_400_000, payload: { lastActivity: now } }], marks: [] });
  if (store.releaseIfIdle) {
    await store.releaseIfIdle(lease);
    return;
  }
  if (!(await store.next(ref))) await store.release(lease);
  await store.next(ref);
}

/** `count` messages over all users, each lane keeping to its own users (one step per conversation at a time). */
async function run(count) {
  let sent = 0;
  await Promise.all(
    Array.from({ length: LANES }, async (_, lane) => {
      const mine = Math.ceil((users - lane) / LANES);
      for (let j = 0; sent < count; j++) await step(lane + LANES * (j % mine), sent++);
    }),
  );
}

for (let u = 0; u < users; u++) {
  const ref = refOf(u);
  const recorded = await store.record({ ...ref, kind: 'sms', payload: form(u, 'open') });
  const lease = await store.claim(ref, 'bench', 30_000);
  await store.commit({ lease, consumed: recorded.seq, session: opened(u), timers: [], marks: [] });
  await store.release(lease);
}
await run(5000); // warm-up: the code optimised, the database and its log grown
const ioBefore = io();
const before = process.cpuUsage();
await run(messages);
const used = process.cpuUsage(before);
const ioAfter = io();
const per = (us) => (us / messages).toFixed(1);
console.log(
  `${kind}: ${per(used.user + used.system)} µs of CPU per message in the store (user ${per(used.user)}, system ${per(used.system)}), ${messages} messages over ${users} Sessions, history ${HISTORY_AT_START} lines at the start (${apart ? 'apart' : 'in the record'}), log ${LOG_AT_START} entries (${logApart ? 'apart' : 'in the record'})`,
);
if (ioBefore && ioAfter) {
  const each = (key) => ((ioAfter[key] - ioBefore[key]) / messages).toFixed(key.startsWith('sysc') ? 1 : 0);
  console.log(
    `  per message: ${each('wchar')} bytes written in ${each('syscw')} writes, ${each('rchar')} bytes read in ${each('syscr')} reads (the log, the checkpoints and the pages SQLite's cache did not hold)`,
  );
}
await store.close();
rmSync(dir, { recursive: true, force: true });
