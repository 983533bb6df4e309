import { copyFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import should from 'should';
import type { DatabaseConstructor } from '../../src/stores/sqlite/sqlite';
import { eventually } from '../harness/node-red';

// The built package, as Node-RED loads it.

const { SqliteStore } = require('../../../dist/stores/sqlite/sqlite-store.js');

const { loadSqlite } = require('../../../dist/stores/sqlite/sqlite.js');

// The stores' lines in English, as a store built without a runtime says them.
const say = require('../../../dist/model/texts.js').coreSay();

type Store = import('../../src/stores/sqlite/sqlite-store').SqliteStore;

/**
 * With synchronous=NORMAL, what is only in the write-ahead log is lost to a power cut; the store
 * folds the log into the database file about a second after a write (on a worker thread), so the
 * .db file alone holds every step older than that, however little traffic there is (SQLite's own
 * checkpoint waits for 10,000 pages).
 */
describe('the SQLite store folds its log into the database file a second after a write', function () {
  this.timeout(20000);
  const Database = loadSqlite() as DatabaseConstructor;
  let dir: string;
  let store: Store | undefined;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'cs-checkpoint-'));
  });
  afterEach(async () => {
    await store?.close();
    store = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  /** The messages recorded in a copy of the .db file alone, without its log: what a power cut would leave. */
  function inFileAlone(path: string): string[] {
    const copy = join(dir, `copy-${Date.now()}-${Math.random()}.db`);
    copyFileSync(path, copy);
    const db = new Database(copy);
    try {
      return db
        .prepare('SELECT payload FROM inbound ORDER BY seq')
        .all()
        .map((row) => String(row.payload));
    } finally {
      db.close();
    }
  }

  it('a message recorded by a quiet store is in the database file alone within a few seconds', async function () {
    const path = join(dir, 'channel-sessions.db');
    store = new SqliteStore(Database, { path, synchronous: 'NORMAL', log: { warn() {}, error() {} }, say }) as Store;
    await store.record({ environment: 'env1', conversation: 'c1', kind: 'sms', payload: { Body: 'first' } });
    should(existsSync(`${path}-wal`)).be.true('the store writes ahead to its log');
    await eventually(() => inFileAlone(path).includes('{"Body":"first"}'), 5000, 'the message to be folded into the file');
    // And again for a later write, with the store still open (closing it would fold the log in anyway).
    await store.record({ environment: 'env1', conversation: 'c1', kind: 'sms', payload: { Body: 'second' } });
    await eventually(() => inFileAlone(path).includes('{"Body":"second"}'), 5000, 'the second message to be folded into the file');
  });
});
