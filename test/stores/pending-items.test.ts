import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import should from 'should';
import type { SessionStore } from '../../src/stores/session-store';
import type { DatabaseConstructor } from '../../src/stores/sqlite/sqlite';

// The built package, as Node-RED loads it.
const { PendingItems } = require('../../../dist/stores/sqlite/pending-items.js');

const { SqliteStore } = require('../../../dist/stores/sqlite/sqlite-store.js');

const { loadSqlite } = require('../../../dist/stores/sqlite/sqlite.js');

// The stores' lines in English, as a store built without a runtime says them.
const say = require('../../../dist/model/texts.js').coreSay();

const ref = (conversation: string) => ({ environment: 'env1', conversation });

/** The SQLite store's count of conversations with items waiting: never no when one waits, and bounded. */
describe('SQLite store: pending items counted', function () {
  it('counts at most its limit of conversations, and past it answers yes for those it does not count', function () {
    const pending = new PendingItems(2);
    pending.added(ref('a'));
    pending.added(ref('b'));
    should(pending.any(ref('c'))).be.false();
    pending.added(ref('c')); // not counted: the limit is reached
    should(pending.any(ref('c'))).be.true();
    pending.none(ref('c'));
    pending.consumed(ref('a'));
    should(pending.any(ref('a'))).be.true('unknown since the limit was passed: the worker reads');
    pending.load([{ environment: 'env1', conversation: 'b', n: 1 }]);
    should(pending.any(ref('a'))).be.false();
    should(pending.any(ref('b'))).be.true();
  });

  it('asks to be counted again once the backlog past its limit has drained to half of it', function () {
    const pending = new PendingItems(4);
    for (const c of ['a', 'b', 'c', 'd', 'e']) pending.added(ref(c));
    should(pending.stale()).be.false('four counted: not drained yet');
    pending.consumed(ref('a'));
    should(pending.stale()).be.false('three counted');
    pending.consumed(ref('b'));
    should(pending.stale()).be.true('two counted, and "e" was never counted');
    pending.load([
      { environment: 'env1', conversation: 'c', n: 1 },
      { environment: 'env1', conversation: 'e', n: 1 },
    ]);
    should(pending.stale()).be.false();
    should(pending.any(ref('a'))).be.false('known again: no read needed');
    should(pending.any(ref('e'))).be.true();
  });

  it('does not take an item off twice when the counts were loaded from the file after the write that consumed it', function () {
    const pending = new PendingItems();
    pending.added(ref('a'));
    pending.added(ref('a'));
    const countedAt = pending.loaded(); // inside the write that consumes the first
    // The file after that write's commit, read before the write's caller goes on: one item left.
    pending.load([{ environment: 'env1', conversation: 'a', n: 1 }]);
    pending.consumed(ref('a'), countedAt);
    should(pending.any(ref('a'))).be.true('the second item still waits');
    pending.consumed(ref('a'), pending.loaded());
    should(pending.any(ref('a'))).be.false();
  });
});

/**
 * The same, in the store: a backlog of more conversations than it counts makes the worker read
 * before each release, and once that backlog is served it answers from its counts again, without a
 * restart; a conversation with an item waiting is never let go.
 */
describe('SQLite store: a backlog past the counted conversations, served', function () {
  let dir: string;
  let store: Required<SessionStore>;

  beforeEach(function () {
    dir = mkdtempSync(join(tmpdir(), 'cs-pending-'));
    const log = { warn: () => undefined, error: () => undefined };
    store = new SqliteStore(loadSqlite() as DatabaseConstructor, { path: join(dir, 'sessions.db'), synchronous: 'NORMAL', log, say, pendingLimit: 4 });
  });
  afterEach(async function () {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Claims the conversation, consumes its oldest item, and says whether the store let go of it. */
  async function serve(conversation: string): Promise<boolean> {
    const claimed = (await store.claimNext(ref(conversation), 'worker', 30_000))!;
    should(claimed.item).not.be.undefined();
    await store.commit({ lease: claimed.lease, consumed: claimed.item!.seq });
    return store.releaseIfIdle(claimed.lease);
  }

  it('lets go of a served conversation without an item again once the backlog has drained', async function () {
    for (const c of ['c0', 'c1', 'c2', 'c3', 'c4', 'c5']) await store.record({ ...ref(c), kind: 'message', payload: { text: c } });
    await store.record({ ...ref('c5'), kind: 'message', payload: { text: 'c5 again' } });
    should(await serve('c0')).be.false('past the limit: not known, so kept for the worker to read');
    // Two of the four counted are left: the store counts again from its file.
    should(await serve('c1')).be.true('counted again: nothing waits in c1');
    should(await serve('c2')).be.true();
    should(await serve('c3')).be.true();
    should(await serve('c4')).be.true();
    const c5 = (await store.claimNext(ref('c5'), 'worker', 30_000))!;
    await store.commit({ lease: c5.lease, consumed: c5.item!.seq });
    should(await store.releaseIfIdle(c5.lease)).be.false('its second item waits');
    const again = (await store.next(ref('c5')))!;
    should(again.payload).eql({ text: 'c5 again' });
    await store.commit({ lease: c5.lease, consumed: again.seq });
    should(await store.releaseIfIdle(c5.lease)).be.true();
  });
});
