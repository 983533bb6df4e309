import { join } from 'node:path';
import should from 'should';
import { chain, tab, uid } from './harness/flows';
import { NodeRed, eventually } from './harness/node-red';
import { watchStatuses } from './harness/comms';
import { Tmpfs } from './harness/tmpfs';
import { FakeSlack } from './fakes/slack-api';
import { SlackEvents } from './fakes/slack-events';
import { SIGNING_SECRET, helpDesk, teamchatEnvironment } from './fakes/slack-flows';
import { FakeTwilioMessagingApi } from './fakes/twilio-messaging-api';
import { ACCOUNT_SID, AUTH_TOKEN, inboundForm, messageSid, messagingEnvironment, postInbound } from './fakes/twilio-messaging-webhooks';

/**
 * The durable store on a small tmpfs that is then filled to the last block, while SMS and Slack
 * conversations are under way: what a user and an operator see during the fault and after the
 * space is freed, with nothing done by hand in between.
 */
describe('the Session store\'s disk is full', function () {
  this.timeout(90000);
  const OURS = '+15550007000';
  let disk: Tmpfs;
  let red: NodeRed;
  let twilioApi: FakeTwilioMessagingApi;
  let slackApi: FakeSlack;

  before(async function () {
    const mounted = Tmpfs.mount(16 * 1024 * 1024);
    if (typeof mounted === 'string') {
      console.log(`      skipped: ${mounted}`);
      this.skip();
    }
    disk = mounted as Tmpfs;
    twilioApi = await FakeTwilioMessagingApi.start(ACCOUNT_SID, AUTH_TOKEN);
    slackApi = await FakeSlack.start();
  });
  after(async function () {
    await red?.close();
    disk?.unmount();
    await twilioApi?.close();
    await slackApi?.close();
  });

  it('refuses webhooks with 503 and says so once, acknowledges nothing unrecorded, and resumes by itself when space is freed', async function () {
    const dbPath = join(disk.dir, 'sessions.db');
    red = await NodeRed.start({ settings: { channelSessions: { store: { path: dbPath }, sweepInterval: 1 } } });
    const smsToken = `tok-full-${uid()}`;
    const slackToken = `tok${uid('full')}AAAAAAAAAAAAAAAAAAAA`;
    const zSms = uid('tab');
    const zSlack = uid('tab');
    const slackIds = { start: 'fSlackStart', hello: uid('h'), ask: uid('a'), reply: uid('r'), end: uid('e') };
    await red.deploy([
      messagingEnvironment('envFullSms', smsToken, twilioApi, red),
      teamchatEnvironment('envFullSlack', slackToken, slackApi, { sessionMode: 'PerChannel' }),
      tab(zSms, 'SMS survey'),
      ...chain(zSms, [
        ['telco-sms-start', 'fSmsStart', { environment: 'envFullSms' }],
        ['input-task', 'fQ1', { prompt: 'Q1?', resultVariable: 'a1' }],
        // The answer's step is still running when the disk fills: its commit is what fails.
        ['delay', 'fSlow', { pauseType: 'delay', timeout: '1500', timeoutUnits: 'milliseconds', rate: '1', nbRateUnits: '1', rateUnits: 'second', randomFirst: '1', randomLast: '5', randomUnits: 'seconds', drop: false, allowrate: false, outputs: 1 }],
        ['input-task', 'fQ2', { prompt: 'Q2?', resultVariable: 'a2' }],
        ['output-task', 'fThanks', { text: 'Thanks {a1},{a2}' }],
        ['end-task', 'fEnd'],
      ]),
      tab(zSlack, 'Help desk'),
      ...helpDesk(zSlack, 'envFullSlack', slackIds),
    ]);
    const statuses = await watchStatuses(red);
    const slack = new SlackEvents(red, slackToken, SIGNING_SECRET, slackApi.team);
    const texts = (user: string) => twilioApi.messagesTo(user).map((m) => String(m.Body));
    const posted = (channel: string) => slackApi.callsOf('chat.postMessage').filter((c) => c.body.channel === channel).map((c) => String(c.body.text));

    const sms = Array.from({ length: 6 }, (_, i) => ({ user: `+1555700000${i}`, sids: [messageSid(), messageSid(), messageSid()] }));
    const people = Array.from({ length: 3 }, (_, i) => ({ user: `U0FULL${i}`, channel: `D0FULL${i}` }));
    const answer = (i: number, step: number) => (step === 0 ? 'hi' : `${['', 'one', 'two'][step]}-${i}`);
    const sendSms = (i: number, step: number) => postInbound(red, smsToken, inboundForm(sms[i].user, OURS, answer(i, step), { MessageSid: sms[i].sids[step] }));

    // Before the fault: every conversation waits at its first question.
    await Promise.all(sms.map(async (_, i) => should((await sendSms(i, 0)).status).equal(200)));
    await Promise.all(people.map(async (p) => should((await slack.post(slack.envelope(slack.direct(p.user, 'hello', { channel: p.channel })))).status).equal(200)));
    await eventually(() => sms.every((s) => texts(s.user).includes('Q1?')) && people.every((p) => posted(p.channel).includes('What else?')), 15000, 'every first question');
    should(statuses.get('fSmsStart')?.text).not.match(/store/);

    // Three answers are acknowledged (recorded), then the disk fills while their steps run.
    for (const i of [0, 1, 2]) should((await sendSms(i, 1)).status).equal(200);
    disk.fill();

    // Nothing can be recorded now: every webhook is refused, so the provider keeps the message.
    const slackRefused: Array<Record<string, unknown>> = [];
    for (const i of [3, 4, 5]) should((await sendSms(i, 1)).status).equal(503, `the answer of ${sms[i].user} while the disk is full`);
    const newcomer = { user: '+15557009999', sid: messageSid() };
    should((await postInbound(red, smsToken, inboundForm(newcomer.user, OURS, 'hi', { MessageSid: newcomer.sid }))).status).equal(503);
    for (const [i, p] of people.entries()) {
      const envelope = slack.envelope(slack.direct(p.user, `answer-${i}`, { channel: p.channel }));
      should((await slack.post(envelope)).status).equal(503, `the Slack event of ${p.user} while the disk is full`);
      slackRefused.push(envelope);
    }
    const logged = await red.waitForLog(/\[error\].*Session store \(.*sessions\.db\).*could not/, 10000);
    should(logged).containEql(dbPath);
    const shown = await eventually(() => ['fSmsStart', slackIds.start].every((id) => /Session store unavailable/.test(statuses.get(id)?.text ?? '')) && statuses.get('fSmsStart'), 10000, 'the start nodes to show the fault');
    should(shown.fill).equal('red');
    should(statuses.get(slackIds.start)?.fill).equal('red');
    // The steps in flight could not be saved; the fault lasts a few sweeps.
    await eventually(() => [0, 1, 2].every((i) => texts(sms[i].user).includes('Q2?')), 10000, 'the steps in flight to reach Q2');
    await new Promise((r) => setTimeout(r, 3000));
    for (const i of [3, 4, 5]) should(texts(sms[i].user)).eql(['Q1?'], 'a refused answer is not handled');
    should(twilioApi.messagesTo(newcomer.user)).have.length(0);

    // Space is freed: nobody redeploys or restarts, and nothing new arrives.
    disk.free();
    await red.waitForLog(/can be written again; service resumes/, 15000);
    await eventually(() => ['fSmsStart', slackIds.start].every((id) => !/store/.test(statuses.get(id)?.text ?? '')), 10000, 'the start nodes to clear the fault');
    should(statuses.get('fSmsStart')?.fill).equal('green');
    // The answers acknowledged before the fault were kept and are handled: those Sessions wait at Q2.
    for (const i of [0, 1, 2]) {
      await eventually(async () => {
        const list = (await red.admin('GET', '/channel-sessions/sessions?environment=envFullSms')).body as any[];
        return list.find((s) => s.conversation === `${sms[i].user}>${OURS}` && s.waitingAt?.nodeId === 'fQ2');
      }, 10000, `the acknowledged answer of ${sms[i].user} to be handled`);
    }

    // What was refused is sent again (Slack retries; an SMS user resends), and every conversation goes on where it was.
    for (const i of [3, 4, 5]) should((await sendSms(i, 1)).status).equal(200);
    for (const envelope of slackRefused) should((await slack.post(envelope, { retryNum: 1 })).status).equal(200);
    should((await postInbound(red, smsToken, inboundForm(newcomer.user, OURS, 'hi', { MessageSid: newcomer.sid }))).status).equal(200);
    await eventually(() => sms.every((s) => texts(s.user).includes('Q2?')), 15000, 'every SMS user to be asked Q2');
    for (const i of sms.keys()) should((await sendSms(i, 2)).status).equal(200);
    await eventually(() => sms.every((s, i) => texts(s.user).includes(`Thanks one-${i},two-${i}`)), 15000, 'every survey to complete');
    await eventually(() => people.every((p, i) => posted(p.channel).includes(`Got answer-${i}`)), 15000, 'every Slack answer to be handled');
    await eventually(() => texts(newcomer.user).includes('Q1?'), 10000, 'the newcomer to be asked');

    for (const [i, s] of sms.entries()) {
      const said = texts(s.user);
      should(said.filter((t, k) => t !== said[k - 1])).eql(['Q1?', 'Q2?', `Thanks one-${i},two-${i}`], `${s.user} heard ${JSON.stringify(said)}`);
      // Only the step whose save failed may be said again, once.
      should(said.length).belowOrEqual(4, `${s.user} heard ${JSON.stringify(said)}`);
    }
    for (const [i, p] of people.entries()) should(posted(p.channel)).eql(['Hello : hello', 'What else?', `Got answer-${i}`]);
    // Said once, not once per refused request (12 refusals, several failed saves).
    const logs = red.logs.join('\n');
    should(logs.match(/\[error\] \[channel-sessions\] the Session store .*could not/g) ?? []).have.length(1, logs);
    should(logs.match(/inbound message refused \(503\)/g) ?? []).have.length(1);
    should(logs.match(/Event refused \(503\)/g) ?? []).have.length(1);
    statuses.close();
  });
});
