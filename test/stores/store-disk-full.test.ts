import { join } from 'node:path';
import should from 'should';
import { eventually } from '../harness/node-red';
import { watchStatuses } from '../harness/comms';
import { Tmpfs } from '../harness/tmpfs';
import { SLACK_START, SMS_Q2, SMS_START, StoreFaultRig } from '../harness/store-fault-rig';

/**
 * The durable store on a small tmpfs that is then filled to the last block, while SMS and Slack
 * conversations are under way: what a user and an operator see during the fault and after the
 * space is freed, with nothing done by hand in between.
 */
describe("the Session store's disk is full", function () {
  this.timeout(90000);
  let disk: Tmpfs;
  let rig: StoreFaultRig;

  before(async function () {
    const mounted = Tmpfs.mount(16 * 1024 * 1024);
    if (typeof mounted === 'string') {
      console.log(`      skipped: ${mounted}`);
      this.skip();
    }
    disk = mounted;
    rig = await StoreFaultRig.start();
  });
  after(async function () {
    await rig?.close();
    disk?.unmount();
  });

  it('refuses webhooks with 503 and says so once, acknowledges nothing unrecorded, and resumes by itself when space is freed', async function () {
    const dbPath = join(disk.dir, 'sessions.db');
    await rig.launch(dbPath);
    const { red } = rig;
    const statuses = await watchStatuses(red);
    const sms = rig.smsUsers(6, '+1555700');
    const people = Array.from({ length: 3 }, (_, i) => ({ user: `U0FULL${i}`, channel: `D0FULL${i}` }));

    // Before the fault: every conversation waits at its first question.
    await Promise.all(sms.map(async (_, i) => should((await rig.sendSms(sms, i, 0)).status).equal(200)));
    await Promise.all(people.map(async (p) => should((await rig.direct(p.user, p.channel, 'hello')).res.status).equal(200)));
    await eventually(
      () => sms.every((s) => rig.texts(s.user).includes('Q1?')) && people.every((p) => rig.posted(p.channel).includes('What else?')),
      15000,
      'every first question',
    );
    should(statuses.get(SMS_START)?.text).not.match(/store/);

    // Three answers are acknowledged (recorded), then the disk fills while their steps run.
    for (const i of [0, 1, 2]) should((await rig.sendSms(sms, i, 1)).status).equal(200);
    disk.fill();

    // Nothing can be recorded now: every webhook is refused, so the provider keeps the message.
    for (const i of [3, 4, 5]) should((await rig.sendSms(sms, i, 1)).status).equal(503, `the answer of ${sms[i].user} while the disk is full`);
    const [newcomer] = rig.smsUsers(1, '+1555709');
    should((await rig.sendSms([newcomer], 0, 0)).status).equal(503);
    const slackRefused: Array<Record<string, unknown>> = [];
    for (const [i, p] of people.entries()) {
      const { res, envelope } = await rig.direct(p.user, p.channel, `answer-${i}`);
      should(res.status).equal(503, `the Slack event of ${p.user} while the disk is full`);
      slackRefused.push(envelope);
    }
    const logged = await red.waitForLog(/\[error\].*Session store \(.*sessions\.db\).*could not/, 10000);
    should(logged).containEql(dbPath);
    const shown = await eventually(
      () => [SMS_START, SLACK_START].every((id) => /Session store unavailable/.test(statuses.get(id)?.text ?? '')) && statuses.get(SMS_START),
      10000,
      'the start nodes to show the fault',
    );
    should(shown.fill).equal('red');
    should(statuses.get(SLACK_START)?.fill).equal('red');
    // The steps in flight ran (Q2 was sent) but cannot be saved yet; the fault lasts a few sweeps.
    await eventually(() => [0, 1, 2].every((i) => rig.texts(sms[i].user).includes('Q2?')), 10000, 'the steps in flight to reach Q2');
    await new Promise((r) => setTimeout(r, 3000));
    for (const i of [3, 4, 5]) should(rig.texts(sms[i].user)).eql(['Q1?'], 'a refused answer is not handled');
    should(rig.texts(newcomer.user)).eql([]);

    // Space is freed: nobody redeploys or restarts, and nothing new arrives.
    disk.free();
    await red.waitForLog(/can be written again; service resumes/, 15000);
    await eventually(() => [SMS_START, SLACK_START].every((id) => !/store/.test(statuses.get(id)?.text ?? '')), 10000, 'the start nodes to clear the fault');
    should(statuses.get(SMS_START)?.fill).equal('green');
    // The answers acknowledged before the fault were kept and are handled: those Sessions wait at Q2.
    for (const i of [0, 1, 2]) await rig.waitingAt(sms[i].user, SMS_Q2);

    // What was refused is sent again (Slack retries; an SMS user resends), and every conversation goes on where it was.
    for (const i of [3, 4, 5]) should((await rig.sendSms(sms, i, 1)).status).equal(200);
    for (const envelope of slackRefused) should((await rig.slack.post(envelope, { retryNum: 1 })).status).equal(200);
    should((await rig.sendSms([newcomer], 0, 0)).status).equal(200);
    await eventually(() => sms.every((s) => rig.texts(s.user).includes('Q2?')), 15000, 'every SMS user to be asked Q2');
    for (const i of sms.keys()) should((await rig.sendSms(sms, i, 2)).status).equal(200);
    await eventually(() => sms.every((s, i) => rig.texts(s.user).includes(`Thanks one-${i},two-${i}`)), 15000, 'every survey to complete');
    await eventually(() => people.every((p, i) => rig.posted(p.channel).includes(`Got answer-${i}`)), 15000, 'every Slack answer to be handled');
    await eventually(() => rig.texts(newcomer.user).includes('Q1?'), 10000, 'the newcomer to be asked');

    // A step whose save failed is saved when space is freed, not run again: nobody hears a question twice.
    for (const [i, s] of sms.entries()) should(rig.texts(s.user)).eql(['Q1?', 'Q2?', `Thanks one-${i},two-${i}`], `what ${s.user} heard`);
    for (const [i, p] of people.entries()) should(rig.posted(p.channel)).eql(['Hello : hello', 'What else?', `Got answer-${i}`]);
    // Said once, not once per refused request (7 refusals, three steps' saves tried again and again, sweeps every second).
    const logs = red.logs.join('\n');
    should(logs.match(/\[error\] \[channel-sessions\] the Session store .*could not/g) ?? []).have.length(1, logs);
    should(logs.match(/inbound message refused \(503\)/g) ?? []).have.length(1);
    should(logs.match(/Event refused \(503\)/g) ?? []).have.length(1);
    statuses.close();
  });
});
