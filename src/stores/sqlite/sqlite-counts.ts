import { inTransaction, type DatabaseSync } from './sqlite';

/**
 * Live Sessions counted by Environment and by the node they wait at ('' while running), kept by
 * triggers in the same transaction as every change of `sessions`. The "N waiting" status (asked
 * for at most twice a second while steps run) and an Environment's Max Sessions check (at every
 * new Session) would otherwise count the whole table each time: 4 ms at 100,000 waiting Sessions,
 * 40 ms at a million. A step that waits at the same node again changes no count and writes nothing
 * here.
 */
const SCHEMA = `
CREATE TABLE IF NOT EXISTS session_counts (
  environment TEXT NOT NULL, waiting_node TEXT NOT NULL, n INTEGER NOT NULL,
  PRIMARY KEY (environment, waiting_node)) WITHOUT ROWID;
CREATE TRIGGER IF NOT EXISTS session_counts_insert AFTER INSERT ON sessions BEGIN
  INSERT INTO session_counts (environment, waiting_node, n) VALUES (NEW.environment, COALESCE(NEW.waiting_node, ''), 1)
    ON CONFLICT (environment, waiting_node) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER IF NOT EXISTS session_counts_delete AFTER DELETE ON sessions BEGIN
  UPDATE session_counts SET n = n - 1 WHERE environment = OLD.environment AND waiting_node = COALESCE(OLD.waiting_node, '');
END;
CREATE TRIGGER IF NOT EXISTS session_counts_update AFTER UPDATE OF environment, waiting_node ON sessions
WHEN OLD.environment IS NOT NEW.environment OR OLD.waiting_node IS NOT NEW.waiting_node BEGIN
  UPDATE session_counts SET n = n - 1 WHERE environment = OLD.environment AND waiting_node = COALESCE(OLD.waiting_node, '');
  INSERT INTO session_counts (environment, waiting_node, n) VALUES (NEW.environment, COALESCE(NEW.waiting_node, ''), 1)
    ON CONFLICT (environment, waiting_node) DO UPDATE SET n = n + 1;
END;
`;

/** Marks a database whose counts were taken from its Sessions (one written before the counts had none). */
const COUNTED = 'session_counts';

/** Creates the counts and their triggers; a database that had Sessions before them is counted once, here. */
export function ensureSessionCounts(db: DatabaseSync): void {
  db.exec(SCHEMA);
  if (db.prepare('SELECT 1 AS found FROM meta WHERE key = ?').get(COUNTED)) return;
  inTransaction(db, () => {
    db.exec(`DELETE FROM session_counts;
      INSERT INTO session_counts (environment, waiting_node, n)
        SELECT environment, COALESCE(waiting_node, ''), COUNT(*) FROM sessions GROUP BY 1, 2;`);
    db.prepare('INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)').run(COUNTED, new Date().toISOString());
  });
}

/**
 * Live Sessions counted by Environment, Channel and whether they wait at a node, for the metrics'
 * Session gauges (scraped every few seconds, which must not read the Sessions of a big file), kept
 * like the counts above. The update trigger writes only when a step moves a Session to another
 * pair or between running and waiting: the usual step, which waits again, writes nothing here.
 */
const CHANNEL_SCHEMA = `
CREATE TABLE IF NOT EXISTS channel_counts (
  environment TEXT NOT NULL, channel TEXT NOT NULL, waiting INTEGER NOT NULL, n INTEGER NOT NULL,
  PRIMARY KEY (environment, channel, waiting)) WITHOUT ROWID;
CREATE TRIGGER IF NOT EXISTS channel_counts_insert AFTER INSERT ON sessions BEGIN
  INSERT INTO channel_counts (environment, channel, waiting, n) VALUES (NEW.environment, NEW.channel, NEW.waiting_node IS NOT NULL, 1)
    ON CONFLICT (environment, channel, waiting) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER IF NOT EXISTS channel_counts_delete AFTER DELETE ON sessions BEGIN
  UPDATE channel_counts SET n = n - 1 WHERE environment = OLD.environment AND channel = OLD.channel AND waiting = (OLD.waiting_node IS NOT NULL);
END;
CREATE TRIGGER IF NOT EXISTS channel_counts_update AFTER UPDATE OF environment, channel, waiting_node ON sessions
WHEN OLD.environment IS NOT NEW.environment OR OLD.channel IS NOT NEW.channel OR (OLD.waiting_node IS NULL) <> (NEW.waiting_node IS NULL) BEGIN
  UPDATE channel_counts SET n = n - 1 WHERE environment = OLD.environment AND channel = OLD.channel AND waiting = (OLD.waiting_node IS NOT NULL);
  INSERT INTO channel_counts (environment, channel, waiting, n) VALUES (NEW.environment, NEW.channel, NEW.waiting_node IS NOT NULL, 1)
    ON CONFLICT (environment, channel, waiting) DO UPDATE SET n = n + 1;
END;
`;

/** Marks a database whose counts per Channel were taken from its Sessions. */
const CHANNELS_COUNTED = 'channel_counts';

/**
 * The Session's Channel in a column of its row (written by the commit with the record), so the
 * counts per Channel can be kept by triggers. A database written before it (0.1.0, or before these
 * counts) gets the column here, filled once from each record (a record that is not JSON gets '':
 * it is set aside when read).
 */
export function ensureSessionChannel(db: DatabaseSync): void {
  const columns = db.prepare('PRAGMA table_info(sessions)').all();
  if (columns.some((c) => c.name === 'channel')) return;
  inTransaction(db, () =>
    db.exec(`ALTER TABLE sessions ADD COLUMN channel TEXT NOT NULL DEFAULT '';
      UPDATE sessions SET channel = COALESCE(CASE WHEN json_valid(record) THEN json_extract(record, '$.channel') END, '');`),
  );
}

/** Creates the counts per Channel and their triggers; a database that had Sessions before them is counted once, here. */
export function ensureChannelCounts(db: DatabaseSync): void {
  db.exec(CHANNEL_SCHEMA);
  if (db.prepare('SELECT 1 AS found FROM meta WHERE key = ?').get(CHANNELS_COUNTED)) return;
  inTransaction(db, () => {
    db.exec(`DELETE FROM channel_counts;
      INSERT INTO channel_counts (environment, channel, waiting, n)
        SELECT environment, channel, waiting_node IS NOT NULL, COUNT(*) FROM sessions GROUP BY 1, 2, 3;`);
    db.prepare('INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)').run(CHANNELS_COUNTED, new Date().toISOString());
  });
}

export const COUNT_SQL = {
  count: 'SELECT COALESCE(SUM(n), 0) AS n FROM session_counts',
  countEnv: 'SELECT COALESCE(SUM(n), 0) AS n FROM session_counts WHERE environment = ?',
  byNode: "SELECT waiting_node AS node, SUM(n) AS n FROM session_counts WHERE waiting_node <> '' GROUP BY waiting_node HAVING SUM(n) > 0",
  byChannel: `SELECT environment, channel, SUM(n) AS live, SUM(CASE WHEN waiting THEN n ELSE 0 END) AS waiting
    FROM channel_counts GROUP BY environment, channel HAVING SUM(n) > 0`,
};
