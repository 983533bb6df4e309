import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { REPO_ROOT } from '../test/harness/node-red';
import type { SessionRecord } from '../src/model/session';
import type { DatabaseConstructor } from '../src/stores/sqlite/sqlite';
import type { SqliteStore as SqliteStoreClass } from '../src/stores/sqlite/sqlite-store';
import type { readInbound as ReadInbound } from '../src/messaging/inbound-message';
import type { coreSay as CoreSay } from '../src/model/texts';
import { CREDS } from './flows';
import { newMessageSid } from './signing';

/** What the messaging inbound route records (src/messaging/inbound-route.ts keeps these private). */
const INBOUND_KIND = 'messaging';
const MESSAGE_SID_KEPT_MS = 24 * 60 * 60 * 1000;
const SEED_CONCURRENCY = 64;

/** The package as Node-RED loads it: the store and the route's reader from dist/. */
function fromDist() {
  const dist = (path: string) => require(join(REPO_ROOT, 'dist', path));
  return {
    SqliteStore: (dist('stores/sqlite/sqlite-store.js') as { SqliteStore: typeof SqliteStoreClass }).SqliteStore,
    coreSay: (dist('model/texts.js') as { coreSay: typeof CoreSay }).coreSay,
    loadSqlite: (dist('stores/sqlite/sqlite.js') as { loadSqlite: () => DatabaseConstructor | string }).loadSqlite,
    readInbound: (dist('messaging/inbound-message.js') as { readInbound: typeof ReadInbound }).readInbound,
  };
}

/**
 * Writes waiting messaging Sessions straight into a stopped runtime's SQLite file, the way the
 * engine writes a Session opened by a webhook: the inbound message recorded (with its MessageSid
 * dedupe key), then one step committed that consumes it and leaves the Session waiting, with its
 * timers. Each Session is a copy of `templateUser`'s, which a webhook opened, with its own number,
 * id, MessageSid and times. Filling 100,000 Sessions through webhooks would take minutes.
 */
export async function seedWaitingSessions(options: {
  databasePath: string;
  environment: string;
  to: string;
  templateUser: string;
  users: (n: number) => string;
  from: number;
  count: number;
}): Promise<void> {
  const { SqliteStore, coreSay, loadSqlite, readInbound } = fromDist();
  const Database = loadSqlite();
  if (typeof Database === 'string') throw new Error(Database);
  const log = { warn: (line: string) => console.warn(line), error: (line: string) => console.error(line) };
  const store = new SqliteStore(Database, { path: options.databasePath, synchronous: 'NORMAL', log, say: coreSay() });
  const raw = new Database(options.databasePath);
  try {
    const conversation = (user: string) => `${user}>${options.to}`;
    const template = await store.liveSession({ environment: options.environment, conversation: conversation(options.templateUser) });
    if (!template || template.state !== 'waiting') throw new Error(`no waiting Session of ${options.templateUser} to copy`);
    const timers = raw
      .prepare('SELECT kind, due, payload FROM timers WHERE session_id = ?')
      .all(template.id)
      .map((row) => ({ kind: String(row.kind) as 'timeout' | 'expire', offset: Number(row.due) - template.lastActivity, payload: String(row.payload) }));
    const templateSid = String((template.vars.message as { messageId?: string } | undefined)?.messageId ?? '');
    // Its history (kept apart from the record) goes with each copy, which its commit appends.
    template.newHistory = await store.history(template.id);
    const text = JSON.stringify(template);
    const seedOne = async (n: number) => {
      const user = options.users(n);
      const messageSid = newMessageSid();
      const read = readInbound({ AccountSid: CREDS.accountSid, MessageSid: messageSid, From: user, To: options.to, Body: 'open', NumMedia: '0' });
      if (!read.ok) throw new Error(read.reason);
      const ref = { environment: options.environment, conversation: conversation(user) };
      const recorded = await store.record({
        ...ref,
        kind: INBOUND_KIND,
        payload: read.message,
        dedupe: { key: `messaging/${options.environment}/${messageSid}`, ttlMs: MESSAGE_SID_KEPT_MS },
      });
      if (recorded === 'duplicate') throw new Error(`MessageSid ${messageSid} seen before`);
      const lease = await store.claim(ref, 'bench-seed');
      const item = await store.next(ref);
      if (!lease || !item) throw new Error(`could not take ${ref.conversation}`);
      const now = Date.now();
      const session = copyOf(text, template, { id: randomBytes(12).toString('hex'), user, messageSid: templateSid ? messageSid : '' }, now);
      await store.commit({
        lease,
        consumed: item.seq,
        session,
        timers: timers.map((t) => ({
          kind: t.kind,
          due: now + t.offset,
          payload: JSON.parse(t.payload.split(String(template.lastActivity)).join(String(now))),
        })),
      });
      await store.release(lease);
    };
    // Many conversations at once, as webhooks under load come: their writes share transactions.
    const end = options.from + options.count;
    for (let n = options.from; n < end; n += SEED_CONCURRENCY) {
      await Promise.all(Array.from({ length: Math.min(SEED_CONCURRENCY, end - n) }, (_, k) => seedOne(n + k)));
    }
  } finally {
    raw.close();
    await store.close();
  }
}

/** The template with another user's number, id and MessageSid, all its times set to `now`. */
function copyOf(text: string, template: SessionRecord, as: { id: string; user: string; messageSid: string }, now: number): SessionRecord {
  let copy = text
    .split(template.id)
    .join(as.id)
    .split(template.binding.user as string)
    .join(as.user);
  const templateSid = (template.vars.message as { messageId?: string } | undefined)?.messageId;
  if (templateSid && as.messageSid) copy = copy.split(templateSid).join(as.messageSid);
  const session = JSON.parse(copy) as SessionRecord;
  session.created = now;
  session.lastActivity = now;
  if (session.waitingAt) session.waitingAt.since = now;
  for (const entry of [...(session.newHistory ?? []), ...(session.newLog ?? [])]) entry.at = now;
  return session;
}
