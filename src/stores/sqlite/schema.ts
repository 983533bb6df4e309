import { ensureChannelCounts, ensureSessionChannel, ensureSessionCounts } from './sqlite-counts';
import { inTransaction, type DatabaseSync } from './sqlite';

/**
 * The tables of the Session store's database (the sqlite-context store's `context` table among
 * them), and what a database written by an earlier version gets at open: `createSchema` makes
 * what is missing and upgrades what is older, so any earlier file opens as today's (a table added
 * since, such as the effects journal, is made there by its CREATE ... IF NOT EXISTS).
 */
const SCHEMA = `
CREATE TABLE IF NOT EXISTS inbound (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  environment TEXT NOT NULL, conversation TEXT NOT NULL,
  kind TEXT NOT NULL, payload TEXT NOT NULL, at INTEGER NOT NULL, v INTEGER NOT NULL DEFAULT 1);
CREATE INDEX IF NOT EXISTS inbound_conversation ON inbound(environment, conversation, seq);
CREATE TABLE IF NOT EXISTS sessions (
  id TEXT PRIMARY KEY,
  environment TEXT NOT NULL, conversation TEXT NOT NULL,
  waiting_node TEXT, activity INTEGER NOT NULL, record TEXT NOT NULL, channel TEXT NOT NULL DEFAULT '', person TEXT);
CREATE UNIQUE INDEX IF NOT EXISTS sessions_conversation ON sessions(environment, conversation);
CREATE INDEX IF NOT EXISTS sessions_waiting_node ON sessions(waiting_node);
CREATE INDEX IF NOT EXISTS sessions_activity ON sessions(activity);
CREATE TABLE IF NOT EXISTS history (
  session_id TEXT NOT NULL, n INTEGER NOT NULL, line TEXT NOT NULL,
  PRIMARY KEY (session_id, n)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS session_log (
  session_id TEXT NOT NULL, n INTEGER NOT NULL, entry TEXT NOT NULL,
  PRIMARY KEY (session_id, n)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS timers (
  session_id TEXT NOT NULL, kind TEXT NOT NULL, due INTEGER NOT NULL,
  environment TEXT NOT NULL, conversation TEXT NOT NULL, payload TEXT NOT NULL,
  PRIMARY KEY (session_id, kind));
CREATE INDEX IF NOT EXISTS timers_due ON timers(due);
CREATE TABLE IF NOT EXISTS seen (key TEXT PRIMARY KEY, expires INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS pace (key TEXT PRIMARY KEY, next INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS seen_expires ON seen(expires);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS set_aside (
  id INTEGER PRIMARY KEY AUTOINCREMENT, what TEXT NOT NULL, key TEXT NOT NULL,
  reason TEXT NOT NULL, content TEXT NOT NULL, at INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS effects (
  seq INTEGER NOT NULL, key TEXT NOT NULL, outcome TEXT NOT NULL,
  PRIMARY KEY (seq, key)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS context (
  scope TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL,
  PRIMARY KEY (scope, key));
`;

/** Makes the tables, counts and indexes a database lacks, and upgrades one an earlier version wrote. */
export function createSchema(db: DatabaseSync): void {
  db.exec(SCHEMA);
  ensureItemFormat(db);
  ensureSessionCounts(db);
  ensureSessionChannel(db);
  ensureChannelCounts(db);
  ensureSessionPerson(db);
}

/**
 * A database written before inbound items carried their format: each item gets the column, its
 * rows read as format 1 (the default), which is what they are.
 */
function ensureItemFormat(db: DatabaseSync): void {
  const columns = db.prepare('PRAGMA table_info(inbound)').all();
  if (!columns.some((c) => c.name === 'v')) db.exec('ALTER TABLE inbound ADD COLUMN v INTEGER NOT NULL DEFAULT 1');
}

/**
 * The Session's far party (`person`) in a column of its row, written by the commit with the record,
 * with an index of the rows that have one (`liveWith`). A database written before it gets the
 * column here, filled once for its voice Sessions from their record (`binding.from`, as
 * record-check.ts reads such a record). Needs the `channel` column.
 */
function ensureSessionPerson(db: DatabaseSync): void {
  const columns = db.prepare('PRAGMA table_info(sessions)').all();
  if (!columns.some((c) => c.name === 'person')) {
    inTransaction(db, () =>
      db.exec(`ALTER TABLE sessions ADD COLUMN person TEXT;
        UPDATE sessions SET person = json_extract(record, '$.binding.from')
          WHERE channel = 'TelcoVoice' AND json_valid(record) AND json_type(record, '$.binding.from') = 'text' AND json_extract(record, '$.binding.from') <> '';`),
    );
  }
  // Only the rows with a person are in it: a step of another Channel's Session writes nothing there.
  db.exec('CREATE INDEX IF NOT EXISTS sessions_person ON sessions(environment, person) WHERE person IS NOT NULL');
}
