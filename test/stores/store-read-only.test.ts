import { join } from 'node:path';
import should from 'should';
import { eventually } from '../harness/node-red';
import { watchStatuses } from '../harness/comms';
import { Tmpfs } from '../harness/tmpfs';
import { SLACK_START, SMS_Q2, SMS_START, StoreFaultRig } from '../harness/store-fault-rig';

/**
 * The durable store on a file system that is read-only. Linux refuses `mount -o remount,ro`
 * (EBUSY) while a file on it is open for writing, as the store's database is, so a running store
 * is not made read-only by hand: it meets a read-only file system when Node-RED starts on one (a
 * crash, then a boot that mounted the disk read-only after errors). Here: Node-RED is killed with
 * answers acknowledged and their steps running, the tmpfs is remounted read-only, Node-RED starts
 * again under traffic, and the file system is made writable again while it runs.
 */
describe("the Session store's file system is read-only", function () {
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
    try {
      disk?.readWrite();
    } catch {
      // already writable
    }
    disk?.unmount();
  });

  it('Node-RED starts, refuses webhooks with 503 and says why; writable again, it resumes by itself and handles what it acknowledged', async function () {
    const dbPath = join(disk.dir, 'sessions.db');
    await rig.launch(dbPath);
    const { red } = rig;
    const sms = rig.smsUsers(4, '+1555710');
    const people = Array.from({ length: 2 }, (_, i) => ({ user: `U0RO${i}`, channel: `D0RO${i}` }));
    await Promise.all(sms.map(async (_, i) => should((await rig.sendSms(sms, i, 0)).status).equal(200)));
    await Promise.all(people.map(async (p) => should((await rig.direct(p.user, p.channel, 'hello')).res.status).equal(200)));
    await eventually(
      () => sms.every((s) => rig.texts(s.user).includes('Q1?')) && people.every((p) => rig.posted(p.channel).includes('What else?')),
      15000,
      'every first question',
    );

    // Two answers are acknowledged; the crash comes while their steps run.
    for (const i of [0, 1]) should((await rig.sendSms(sms, i, 1)).status).equal(200);
    await red.kill();
    disk.readOnly();
    const from = red.logs.length;
    await red.relaunch();
    const statuses = await watchStatuses(red);

    // It started; nothing can be recorded, so every webhook is refused and the provider keeps it.
    for (const i of [2, 3]) should((await rig.sendSms(sms, i, 1)).status).equal(503, `the answer of ${sms[i].user} on a read-only store`);
    const slackRefused: Array<Record<string, unknown>> = [];
    for (const [i, p] of people.entries()) {
      const { res, envelope } = await rig.direct(p.user, p.channel, `answer-${i}`);
      should(res.status).equal(503, `the Slack event of ${p.user} on a read-only store`);
      slackRefused.push(envelope);
    }
    const logged = await red.waitForLog(/\[error\].*Session store.*sessions\.db/, 10000);
    should(logged).containEql(dbPath);
    should(logged).match(/read-only/);
    const shown = await eventually(
      () => [SMS_START, SLACK_START].every((id) => /Session store unavailable/.test(statuses.get(id)?.text ?? '')) && statuses.get(SMS_START),
      10000,
      'the start nodes to show the fault',
    );
    should(shown.fill).equal('red');
    await new Promise((r) => setTimeout(r, 2000));
    for (const i of [0, 1, 2, 3]) should(rig.texts(sms[i].user)).eql(['Q1?'], `${sms[i].user}: nothing handled while the store cannot be written`);

    // Writable again: nobody redeploys or restarts.
    disk.readWrite();
    await red.waitForLog(/can be written again; service resumes/, 15000);
    await eventually(() => [SMS_START, SLACK_START].every((id) => !/store/.test(statuses.get(id)?.text ?? '')), 10000, 'the start nodes to clear the fault');
    // What was acknowledged before the crash is handled.
    for (const i of [0, 1]) await rig.waitingAt(sms[i].user, SMS_Q2);

    for (const i of [2, 3]) should((await rig.sendSms(sms, i, 1)).status).equal(200);
    for (const envelope of slackRefused) should((await rig.slack.post(envelope, { retryNum: 1 })).status).equal(200);
    await eventually(() => sms.every((s) => rig.texts(s.user).includes('Q2?')), 15000, 'every SMS user to be asked Q2');
    for (const i of sms.keys()) should((await rig.sendSms(sms, i, 2)).status).equal(200);
    await eventually(() => sms.every((s, i) => rig.texts(s.user).includes(`Thanks one-${i},two-${i}`)), 15000, 'every survey to complete');
    await eventually(() => people.every((p, i) => rig.posted(p.channel).includes(`Got answer-${i}`)), 15000, 'every Slack answer to be handled');
    for (const [i, s] of sms.entries()) {
      const said = rig.texts(s.user);
      should(said.filter((t, k) => t !== said[k - 1])).eql(['Q1?', 'Q2?', `Thanks one-${i},two-${i}`], `${s.user} heard ${JSON.stringify(said)}`);
      should(said.length).belowOrEqual(4, `${s.user} heard ${JSON.stringify(said)}`);
    }
    for (const [i, p] of people.entries()) should(rig.posted(p.channel)).eql(['Hello : hello', 'What else?', `Got answer-${i}`]);
    const logs = red.logs.slice(from).join('\n');
    should(logs.match(/\[error\] \[channel-sessions\].*Session store.*sessions\.db/g) ?? []).have.length(1, logs);
    statuses.close();
  });
});
