import type { DatabaseSync } from './sqlite';

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
  db.exec('BEGIN IMMEDIATE');
  try {
    db.exec(`DELETE FROM session_counts;
      INSERT INTO session_counts (environment, waiting_node, n)
        SELECT environment, COALESCE(waiting_node, ''), COUNT(*) FROM sessions GROUP BY 1, 2;`);
    db.prepare('INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)').run(COUNTED, new Date().toISOString());
    db.exec('COMMIT');
  } catch (err) {
    db.exec('ROLLBACK');
    throw err;
  }
}

export const COUNT_SQL = {
  count: 'SELECT COALESCE(SUM(n), 0) AS n FROM session_counts',
  countEnv: 'SELECT COALESCE(SUM(n), 0) AS n FROM session_counts WHERE environment = ?',
  byNode: "SELECT waiting_node AS node, SUM(n) AS n FROM session_counts WHERE waiting_node <> '' GROUP BY waiting_node HAVING SUM(n) > 0",
};
