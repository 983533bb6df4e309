import should from 'should';
import type { SessionRecord } from '../../src/model/session';
import { sessionRecord } from '../harness/store-records';

// The built package, as Node-RED loads it.
const { rememberSent, sentBySession, SENT_KEPT } = require('../../../dist/messaging/reach.js');

const sid = (n: number) => `SM${n.toString(16).padStart(32, '0')}`;

/** What a Session keeps of the messages it sent, which the delivery statuses are matched against. */
describe('messaging: the messages a Session sent, for their statuses', function () {
  it('keeps the last 20 as short tails, and finds each of them and none other', function () {
    const session: SessionRecord = sessionRecord({ id: 's1' });
    for (let n = 1; n <= 25; n++) rememberSent(session, sid(n));
    const kept = session.binding.sent as string[];
    should(kept).have.length(SENT_KEPT);
    // Ten characters each, with their quotes and commas: the ids kept whole took 721 bytes.
    should(JSON.stringify(kept).length).be.belowOrEqual(SENT_KEPT * 13 + 1);
    for (let n = 6; n <= 25; n++) should(sentBySession(session, sid(n))).be.true(`message ${n}`);
    for (let n = 1; n <= 5; n++) should(sentBySession(session, sid(n))).be.false(`message ${n}, beyond the last 20`);
    should(sentBySession(session, sid(999))).be.false();
    should(sentBySession(session, '')).be.false();
  });

  it('finds a message of a record written before, which kept whole ids, and keeps tails from its next message on', function () {
    const session: SessionRecord = sessionRecord({ id: 's2', binding: { sent: [sid(1), sid(2)] } });
    should(sentBySession(session, sid(2))).be.true();
    rememberSent(session, sid(3));
    should(sentBySession(session, sid(1))).be.true();
    should(sentBySession(session, sid(3))).be.true();
    should((session.binding.sent as string[])[2].length).be.below(sid(3).length);
  });
});
