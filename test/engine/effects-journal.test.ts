import should from 'should';
import type { InboundItem, Lease, SessionStore } from '../../src/stores/session-store';

// The built package, as Node-RED loads it.
const { Effects } = require('../../../dist/engine/effects.js');
const { StoreHealth } = require('../../../dist/engine/store-health.js');
const { ActiveSessions } = require('../../../dist/engine/active-sessions.js');
const { MemoryStore } = require('../../../dist/stores/memory/memory-store.js');

type EffectsType = import('../../src/engine/effects').Effects;
type StepJournal = import('../../src/engine/effects').StepJournal;

const conv = { environment: 'env1', conversation: 'whatsapp:+15550001111>whatsapp:+15550002222' };

/**
 * A step's journal, run again: a recorded effect comes back without being sent; the first one
 * not recorded is looked up first when its Task can (found: recorded, not sent); a lookup that
 * fails sends it again and says once that it may be a duplicate. With a real store (memory) and
 * the engine's own parts; the runtime's log is the test's.
 */
describe('the effects journal of a step that runs again', function () {
  let store: SessionStore;
  let effects: EffectsType;
  let warnings: string[];

  beforeEach(function () {
    store = new MemoryStore('memory');
    warnings = [];
    const red = { log: { info() {}, warn: (line: string) => warnings.push(line), error() {}, debug() {} }, _: (key: string) => key };
    const health = new StoreHealth(red, { environmentsOn: () => [], showNote() {}, resumed() {} });
    effects = new Effects({ red, health, active: new ActiveSessions() });
  });

  /** The item's step, begun (its journal read when it runs again), as the step runner begins one. */
  async function step(): Promise<{ item: InboundItem; lease: Lease; journal: StepJournal }> {
    const claimed = (await store.claimNext!(conv, 'me', 30_000))!;
    const journal = await effects.begin(store, claimed.item!, claimed.lease);
    return { item: claimed.item!, lease: claimed.lease, journal };
  }

  /** The step is cut: not committed, its lease let go. */
  async function cut(s: { item: InboundItem; lease: Lease; journal: StepJournal }): Promise<void> {
    effects.end(s.item, s.journal, false);
    await store.release(s.lease);
  }

  it('gives a recorded outcome back without sending, and looks the first unrecorded one up before sending it', async function () {
    await store.record({ ...conv, kind: 'message', payload: {} });
    const sent: string[] = [];
    const first = await step();
    should(first.item.again).be.undefined();
    const one = await effects.forItem(first.item, 'twilio.message', async (key: string) => (sent.push(key), { sid: 'SM1' }));
    one.should.eql({ sid: 'SM1' });
    await cut(first);

    const again = await step();
    should(again.item.again).be.an.Object();
    const looked: Array<[string, number]> = [];
    const replayed = await effects.forItem(again.item, 'twilio.message', async (key: string) => (sent.push(key), { sid: 'SM-again' }));
    replayed.should.eql({ sid: 'SM1' });
    const found = await effects.forItem(again.item, 'twilio.message', async (key: string) => (sent.push(key), { sid: 'SM-new' }), {
      lookup: async (key: string, since: number) => {
        looked.push([key, since]);
        return { sid: 'SM2' };
      },
    });
    found.should.eql({ sid: 'SM2' });
    // Past the one that may have been on its way, no lookup: sent.
    const third = await effects.forItem(again.item, 'twilio.message', async (key: string) => (sent.push(key), { sid: 'SM3' }), {
      lookup: async () => {
        throw new Error('no lookup past the first unrecorded effect');
      },
    });
    third.should.eql({ sid: 'SM3' });
    sent.should.eql([`step:${first.item.seq}:1`, `step:${first.item.seq}:3`]);
    warnings.should.eql([], 'no lookup was made for the third');
    looked.should.eql([[`step:${first.item.seq}:2`, again.item.again!.since]]);
    // Found and sent alike are recorded: a third run sends nothing.
    [...(await store.effectsOf(conv, first.item.seq)).values()].map((o: any) => o.v).should.eql([{ sid: 'SM1' }, { sid: 'SM2' }, { sid: 'SM3' }]);
  });

  it('sends again when the lookup fails, and says once that it may be a duplicate', async function () {
    await store.record({ ...conv, kind: 'message', payload: {} });
    await cut(await step());
    const again = await step();
    let sends = 0;
    const outcome = await effects.forItem(again.item, 'slack.post', async () => (++sends, { ts: '1.2', channel: 'C1' }), {
      lookup: async () => {
        throw new Error('missing_scope: channels:history');
      },
    });
    outcome.should.eql({ ts: '1.2', channel: 'C1' });
    sends.should.equal(1);
    warnings.should.have.length(1);
    warnings[0].should
      .match(/slack\.post/)
      .and.match(/missing_scope/)
      .and.match(/may be a duplicate/);
  });

  it('sends an effect whose recorded kind differs (the flow changed between the runs)', async function () {
    await store.record({ ...conv, kind: 'message', payload: {} });
    const first = await step();
    await effects.forItem(first.item, 'slack.post', async () => ({ ts: '1.1', channel: 'C1' }));
    await cut(first);
    const again = await step();
    let sends = 0;
    await effects.forItem(again.item, 'slack.update', async () => (++sends, {}));
    sends.should.equal(1);
  });

  it('does not let a step whose lease is gone go on: the outcome it cannot record fails the step', async function () {
    await store.record({ ...conv, kind: 'message', payload: {} });
    const first = await step();
    await store.release(first.lease);
    await effects.forItem(first.item, 'twilio.message', async () => ({ sid: 'SM1' })).should.be.rejectedWith({ name: 'StepCut' });
    warnings.should.have.length(1);
    warnings[0].should.match(/taken over/);
  });
});
