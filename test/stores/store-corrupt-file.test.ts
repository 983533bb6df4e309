import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, openSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import should from 'should';
import { tab, uid } from '../harness/flows';
import { NodeRed, eventually } from '../harness/node-red';
import { FakeTwilioMessagingApi } from '../fakes/twilio-messaging-api';
import { ACCOUNT_SID, AUTH_TOKEN, inboundForm, messagingEnvironment, postInbound, twoQuestionSurvey } from '../fakes/twilio-messaging-webhooks';

/**
 * The durable default's database file (channel-sessions.db in the user dir) damaged between two
 * runs: garbage, empty, a write-ahead log cut short. Node-RED starts each time, says what it found
 * and serves.
 */
describe('a damaged Session store file at start', function () {
  this.timeout(90000);
  const OURS = '+15550006000';
  let fake: FakeTwilioMessagingApi;
  let red: NodeRed;
  let dbPath: string;
  const token = `tok-corrupt-${uid()}`;
  const texts = (user: string) => fake.messagesTo(user).map((m) => String(m.Body));
  const say = async (user: string, text: string) => should((await postInbound(red, token, inboundForm(user, OURS, text))).status).equal(200);
  /** Overwrites the first page of a table or index of the stopped runtime's file with random bytes. */
  const damagePage = (name: string) => {
    const { DatabaseSync } = require('node:sqlite') as {
      DatabaseSync: new (path: string) => { prepare(sql: string): { get(name?: string): any }; close(): void };
    };
    const db = new DatabaseSync(dbPath);
    const page = Number(db.prepare('SELECT rootpage FROM sqlite_master WHERE name = ?').get(name).rootpage);
    const pageSize = Number(db.prepare('PRAGMA page_size').get().page_size);
    db.close();
    const fd = openSync(dbPath, 'r+');
    writeSync(fd, randomBytes(pageSize), 0, pageSize, (page - 1) * pageSize);
    closeSync(fd);
  };
  const storeLines = (from: number) => red.logs.slice(from).filter((l) => /channel-sessions\.db|Session store/.test(l));

  before(async function () {
    fake = await FakeTwilioMessagingApi.start(ACCOUNT_SID, AUTH_TOKEN);
    red = await NodeRed.start();
    dbPath = join(red.userDir, 'channel-sessions.db');
    const z = uid('tab');
    await red.deploy([messagingEnvironment('envCorrupt', token, fake, red), tab(z, 'Survey'), ...twoQuestionSurvey(z, 'envCorrupt', 'k')]);
    await say('+15556000001', 'hi');
    await eventually(() => texts('+15556000001').includes('Q1?'), 10000, 'the first question');
  });
  after(async function () {
    await red?.close();
    await fake?.close();
  });

  it('garbage bytes: the file is moved aside, named in the log, and a new store serves', async function () {
    await red.stop();
    should(existsSync(`${dbPath}-wal`)).be.false('after a stop the database file alone holds everything');
    const garbage = randomBytes(64 * 1024);
    writeFileSync(dbPath, garbage);
    const from = red.logs.length;
    await red.relaunch();
    const line = await red.waitForLog(/moved to \S+ for inspection/, 5000);
    should(line).match(/\[error\]/);
    should(line).containEql(dbPath);
    const aside = /moved to (\S+) for inspection/.exec(line)![1];
    should(existsSync(aside)).be.true();
    should(readFileSync(aside).equals(garbage)).be.true('the set-aside file is the damaged one, untouched');
    // Serves: a new conversation, and the one whose Session was in the damaged file starts afresh.
    await say('+15556000002', 'hi');
    await say('+15556000001', 'again');
    await eventually(
      () => texts('+15556000002').includes('Q1?') && texts('+15556000001').filter((t) => t === 'Q1?').length === 2,
      10000,
      'both to be asked Q1',
    );
    should(storeLines(from)).have.length(1, storeLines(from).join('\n'));
  });

  it('a brand-new store (no file yet) says so at info', function () {
    const line = red.logs.find((l) => /new Session store/.test(l));
    should(line).be.ok();
    should(line).match(/\[info\]/);
    should(line).containEql(dbPath);
  });

  it('an emptied file (0 bytes): named in a warning, set aside, and a new store serves', async function () {
    await say('+15556000009', 'hi');
    await eventually(() => texts('+15556000009').includes('Q1?'), 10000, 'the question');
    await red.stop();
    writeFileSync(dbPath, '');
    const from = red.logs.length;
    await red.relaunch();
    const line = await red.waitForLog(/is empty \(0 bytes\)/, 5000);
    should(line).match(/\[warn\]/);
    should(line).containEql(dbPath);
    should(line).match(/not restored/);
    const aside = /moved to (\S+) for inspection/.exec(line)![1];
    should(existsSync(aside)).be.true('the empty file is set aside, not reused');
    should(statSync(aside).size).equal(0);
    await say('+15556000003', 'hi');
    await say('+15556000009', 'again');
    await eventually(
      () => texts('+15556000003').includes('Q1?') && texts('+15556000009').filter((t) => t === 'Q1?').length === 2,
      10000,
      'both to be asked Q1',
    );
    should(statSync(dbPath).size).above(0);
    should(storeLines(from)).have.length(1, storeLines(from).join('\n'));
  });

  it('a file shortened to its header: moved aside and named with what was found', async function () {
    await red.stop();
    truncateSync(dbPath, 100);
    const from = red.logs.length;
    await red.relaunch();
    const line = await eventually(() => red.logs.slice(from).find((l) => /moved to \S+ for inspection/.test(l)), 5000, 'the line');
    should(line).containEql(dbPath);
    should(line).match(/100 bytes: cut to its header/);
    await say('+15556000010', 'hi');
    await eventually(() => texts('+15556000010').includes('Q1?'), 10000, 'the question');
    should(storeLines(from)).have.length(1, storeLines(from).join('\n'));
  });

  it('a missing file after a first run: named in a warning, and a new store serves', async function () {
    await red.stop();
    rmSync(dbPath);
    const from = red.logs.length;
    await red.relaunch();
    const line = await red.waitForLog(/is missing, though it was opened before/, 5000);
    should(line).match(/\[warn\]/);
    should(line).containEql(dbPath);
    await say('+15556000011', 'hi');
    await eventually(() => texts('+15556000011').includes('Q1?'), 10000, 'the question');
    should(red.logs.slice(from).filter((l) => /new Session store/.test(l))).eql([], 'not called a new store');
  });

  it('a damaged page in the Sessions table: found while serving, the file is moved aside and a new store serves', async function () {
    await say('+15556000006', 'hi');
    await eventually(() => texts('+15556000006').includes('Q1?'), 10000, 'the question');
    await red.stop();
    // The page that holds the Sessions table, overwritten: the file still opens, its header is sound.
    damagePage('sessions');
    const from = red.logs.length;
    await red.relaunch();
    await say('+15556000006', 'again');
    await say('+15556000007', 'hi');
    await eventually(
      () => texts('+15556000007').includes('Q1?') && texts('+15556000006').filter((t) => t === 'Q1?').length === 2,
      10000,
      'both to be asked Q1',
    );
    const line = red.logs.slice(from).find((l) => /moved to \S+ for inspection/.test(l));
    should(line).be.ok();
    should(line).match(/\[error\].*malformed/);
    should(existsSync(/moved to (\S+) for inspection/.exec(line!)![1])).be.true();
  });

  it("a damaged page in the recorded messages' index: found when the store opens, the file is moved aside and a new store serves", async function () {
    await say('+15556000008', 'hi');
    await eventually(() => texts('+15556000008').includes('Q1?'), 10000, 'the question');
    await red.stop();
    // The file opens and its Sessions read, but counting the messages recorded and not yet handled
    // (which the store does as it opens) reads this index.
    damagePage('inbound_conversation');
    const from = red.logs.length;
    await red.relaunch();
    await say('+15556000009', 'hi');
    await eventually(() => texts('+15556000009').includes('Q1?'), 10000, 'a new conversation asked Q1');
    const line = red.logs.slice(from).find((l) => /moved to \S+ for inspection/.test(l));
    if (!line) throw new Error(storeLines(from).join('\n'));
    should(existsSync(/moved to (\S+) for inspection/.exec(line)![1])).be.true();
  });

  it('a write-ahead log cut short after a crash: Node-RED starts, says what SQLite dropped, and the Sessions before the cut go on', async function () {
    // One conversation waits at Q2, then another starts; the last commit is at the end of the log.
    await say('+15556000008', 'hi');
    await eventually(() => texts('+15556000008').includes('Q1?'), 10000, 'the question');
    await say('+15556000008', 'first');
    await eventually(() => texts('+15556000008').includes('Q2?'), 10000, 'the second question');
    await say('+15556000004', 'hi');
    await eventually(() => texts('+15556000004').includes('Q1?'), 10000, 'the question');
    await red.kill();
    const wal = `${dbPath}-wal`;
    const size = statSync(wal).size;
    should(size).above(4096);
    truncateSync(wal, size - 1000);
    const from = red.logs.length;
    await red.relaunch();
    const line = await red.waitForLog(/write-ahead log .* cut short/, 5000);
    should(line).containEql(wal);
    should(line).match(/\[warn\]/);
    // Committed before the cut: the Session at Q2 goes on, and new conversations start.
    await say('+15556000008', 'second');
    await eventually(() => texts('+15556000008').includes('Thanks first,second'), 10000, 'the survey to complete');
    await say('+15556000005', 'hi');
    await eventually(() => texts('+15556000005').includes('Q1?'), 10000, 'a new conversation');
    should(red.logs.slice(from).filter((l) => /\[error\]/.test(l))).eql([]);
  });
});
