import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import should from 'should';
import type { DatabaseConstructor } from '../../src/stores/sqlite/sqlite';

// The built package, as Node-RED loads it.
const { openDatabaseFile, PAGE_CACHE_KB } = require('../../../dist/stores/sqlite/database-file.js');

const { loadSqlite } = require('../../../dist/stores/sqlite/sqlite.js');

// The stores' lines in English, as a store built without a runtime says them.
const say = require('../../../dist/model/texts.js').coreSay();

/**
 * Every connection the Session store and the sqlite-context store open keeps up to 16 MB of the
 * file's pages: a busy store's working set outgrows SQLite's 2 MB default (BENCHMARKS.md), and the
 * bound is what a large database costs in memory at most.
 */
describe("the SQLite stores' page cache", function () {
  let dir: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'cs-page-cache-'));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('holds up to 16 MB of pages on each connection, for either synchronous setting', function () {
    should(PAGE_CACHE_KB).equal(16_384);
    for (const synchronous of ['NORMAL', 'FULL'] as const) {
      const db = openDatabaseFile(loadSqlite() as DatabaseConstructor, {
        path: join(dir, `${synchronous}.db`),
        synchronous,
        log: { warn() {}, error() {} },
        say,
      });
      try {
        should(Number(db.prepare('PRAGMA cache_size').get().cache_size)).equal(-16_384);
      } finally {
        db.close();
      }
    }
  });
});
