import { join } from 'node:path';
import should from 'should';
import { tab, uid } from '../harness/flows';
import { NodeRed, eventually } from '../harness/node-red';
import { FakeTwilioMessagingApi } from '../fakes/twilio-messaging-api';
import { ACCOUNT_SID, AUTH_TOKEN, inboundForm, messagingEnvironment, postInbound, twoQuestionSurvey } from '../fakes/twilio-messaging-webhooks';

interface Db {
  prepare(sql: string): { get(...p: unknown[]): any; all(...p: unknown[]): any[]; run(...p: unknown[]): unknown };
  close(): void;
}

/** The store's file, opened beside the running Node-RED as a person (or an older version) would. */
function openStore(path: string): Db {
  const { DatabaseSync } = require('node:sqlite') as { DatabaseSync: new (path: string, options?: { timeout?: number }) => Db };
  return new DatabaseSync(path, { timeout: 5000 });
}

/**
 * Records in the durable store that the engine cannot use (a Session record missing a field, or
 * not JSON at all; a received message that is not JSON), written with node:sqlite while Node-RED
 * runs. What holds: the conversation is not wedged, the record is kept in the table `set_aside`,
 * the log names it, and other Sessions carry on.
 */
describe('a malformed record in the Session store', function () {
  this.timeout(60000);
  const OURS = '+15550005000';
  const token = `tok-malformed-${uid()}`;
  let fake: FakeTwilioMessagingApi;
  let red: NodeRed;
  let dbPath: string;
  const texts = (user: string) => fake.messagesTo(user).map((m) => String(m.Body));
  const say = async (user: string, text: string) => should((await postInbound(red, token, inboundForm(user, OURS, text))).status).equal(200);
  async function sessionOf(user: string): Promise<any> {
    return eventually(
      async () => {
        const list = (await red.admin('GET', '/channel-sessions/sessions?environment=envBad')).body as any[];
        return list.find((s) => s.conversation === `${user}>${OURS}`);
      },
      10000,
      `the Session of ${user}`,
    );
  }
  async function waitingAtQ2(user: string): Promise<any> {
    await say(user, 'hi');
    await eventually(() => texts(user).includes('Q1?'), 10000, `Q1 for ${user}`);
    await say(user, `one ${user}`);
    await eventually(() => texts(user).includes('Q2?'), 10000, `Q2 for ${user}`);
    return sessionOf(user);
  }

  before(async function () {
    fake = await FakeTwilioMessagingApi.start(ACCOUNT_SID, AUTH_TOKEN);
    red = await NodeRed.start();
    dbPath = join(red.userDir, 'channel-sessions.db');
    const z = uid('tab');
    await red.deploy([messagingEnvironment('envBad', token, fake, red), tab(z, 'Survey'), ...twoQuestionSurvey(z, 'envBad', 'm')]);
  });
  after(async function () {
    await red?.close();
    await fake?.close();
  });

  for (const [what, spoil] of [
    [
      'missing its variables',
      (record: string) => {
        const r = JSON.parse(record);
        delete r.vars;
        return JSON.stringify(r);
      },
    ],
    ['not JSON', (record: string) => record.slice(0, record.length / 2)],
  ] as Array<[string, (record: string) => string]>) {
    it(`a Session record ${what}: the next message starts afresh, the record is set aside and named, others carry on`, async function () {
      const spoilt = `+155550${what.length}01`;
      const other = `+155550${what.length}02`;
      const session = await waitingAtQ2(spoilt);
      await waitingAtQ2(other);
      const db = openStore(dbPath);
      const record = String(db.prepare('SELECT record FROM sessions WHERE id = ?').get(session.id).record);
      const bad = spoil(record);
      db.prepare('UPDATE sessions SET record = ? WHERE id = ?').run(bad, session.id);
      db.close();
      const from = red.logs.length;

      await say(spoilt, 'two');
      // Not wedged: the message is handled, as the opening of a new Session.
      await eventually(() => texts(spoilt).filter((t) => t === 'Q1?').length === 2, 10000, 'the conversation to start afresh');
      const line = await eventually(() => red.logs.slice(from).find((l) => l.includes(session.id)), 5000, 'the set-aside log line');
      should(line).match(/\[error\].*malformed.*set_aside/);
      should(line).containEql(dbPath);
      const check = openStore(dbPath);
      const aside = check.prepare('SELECT what, key, reason, content FROM set_aside WHERE key = ?').all(session.id);
      const stillThere = check.prepare('SELECT id FROM sessions WHERE id = ?').get(session.id);
      check.close();
      should(aside).have.length(1);
      should(aside[0]).match({ what: 'session', content: bad });
      should(stillThere).be.undefined();

      // The new Session runs to its end, and the other conversation was never touched.
      await say(spoilt, 'again');
      await eventually(() => texts(spoilt).filter((t) => t === 'Q2?').length === 2, 10000, 'the new Session to go on');
      await say(other, 'two');
      await eventually(() => texts(other).includes(`Thanks one ${other},two`), 10000, 'the other Session to complete');
    });
  }

  it('a received message that is not JSON is set aside and named; the conversation goes on with the next one', async function () {
    const user = '+15555000301';
    await waitingAtQ2(user);
    const db = openStore(dbPath);
    const result = db
      .prepare('INSERT INTO inbound (environment, conversation, kind, payload, at) VALUES (?, ?, ?, ?, ?)')
      .run('envBad', `${user}>${OURS}`, 'messaging', '{"text": "cut sho', Date.now()) as { lastInsertRowid: number | bigint };
    const seq = String(result.lastInsertRowid);
    db.close();
    const line = await red.waitForLog(new RegExp(`inbound item ${seq} .*set aside`), 10000);
    should(line).match(/\[error\]/);
    const check = openStore(dbPath);
    should(check.prepare("SELECT content FROM set_aside WHERE what = 'inbound' AND key = ?").get(seq)).match({ content: '{"text": "cut sho' });
    check.close();
    await say(user, 'two');
    await eventually(() => texts(user).includes(`Thanks one ${user},two`), 10000, 'the survey to complete');
  });
});
