import should from 'should';
import { chain, tab, uid } from '../harness/flows';
import { NodeRed, eventually } from '../harness/node-red';
import { FakeTwilioMessagingApi } from '../fakes/twilio-messaging-api';
import { ACCOUNT_SID, AUTH_TOKEN, inboundForm, messageSid, messagingEnvironment, postInbound } from '../fakes/twilio-messaging-webhooks';

/**
 * Crashes under traffic: an SMS survey runs for many numbers at once, Node-RED is killed with
 * SIGKILL at a moment chosen by a seed, started again on the same user dir, and each user goes on
 * (re-sending only what was never acknowledged, as a provider would not). What must hold:
 * every acknowledged answer is handled once, in order; no conversation goes back; a completed
 * Session never returns; each reply is sent once, also one in flight at the crash (the step runs
 * again and finds it in the provider's Messages list).
 */
describe('a crash (SIGKILL) under traffic, with the durable default store', function () {
  this.timeout(120000);
  const OURS = '+15550009000';
  const QUESTIONS = ['Q1?', 'Q2?', 'Q3?'];
  let fake: FakeTwilioMessagingApi;

  before(async function () {
    fake = await FakeTwilioMessagingApi.start(ACCOUNT_SID, AUTH_TOKEN);
  });
  after(async () => fake?.close());

  for (const seed of [1, 2, 3]) {
    it(`loses nothing acknowledged and goes back nowhere (seed ${seed})`, async function () {
      const token = `tok-crash-${seed}-${uid()}`;
      const red = await NodeRed.start();
      try {
        const z = uid('tab');
        await red.deploy([
          messagingEnvironment('envCrash', token, fake, red),
          tab(z, 'Survey'),
          ...chain(z, [
            ['telco-sms-start', 'cStart', { environment: 'envCrash' }],
            ['input-task', 'cQ1', { prompt: QUESTIONS[0], resultVariable: 'a1' }],
            ['input-task', 'cQ2', { prompt: QUESTIONS[1], resultVariable: 'a2' }],
            ['input-task', 'cQ3', { prompt: QUESTIONS[2], resultVariable: 'a3' }],
            ['output-task', 'cThanks', { text: 'Thanks {a1},{a2},{a3}' }],
            ['end-task', 'cEnd'],
          ]),
        ]);
        const users = Array.from({ length: 40 }, (_, i) => `+1555${seed}${String(i).padStart(6, '0')}`);
        const script = (i: number) => ['hi', `one-${i}`, `two-${i}`, `three-${i}`];
        const sids = users.map(() => script(0).map(() => messageSid()));
        const acked = users.map(() => [] as boolean[]);
        let alive = true;

        // Each user answers when asked (the question arrived at the fake API), like a person would.
        const converse = (u: number) =>
          (async () => {
            for (let step = 0; step < 4 && alive; step++) {
              if (step > 0) {
                const asked = await eventually(
                  () => !alive || fake.messagesTo(users[u]).some((m) => m.Body === QUESTIONS[step - 1]),
                  30000,
                  `question ${step}`,
                );
                if (!asked || !alive) return;
              }
              const res = await postInbound(red, token, inboundForm(users[u], OURS, script(u)[step], { MessageSid: sids[u][step] })).catch(() => undefined);
              if (res?.status === 200) acked[u][step] = true;
              else return;
            }
          })().catch(() => undefined);
        const traffic = users.map((_, u) => converse(u));
        // The kill lands when the seed's share of all answers was acknowledged: mid-traffic, every time.
        const total = users.length * 4;
        await eventually(() => acked.flat().filter(Boolean).length >= (total * seed) / 4, 30000, 'traffic to reach the kill point');
        alive = false;
        await red.kill();
        await Promise.all(traffic);
        const completedBefore = users.filter((u) => fake.messagesTo(u).some((m) => String(m.Body).startsWith('Thanks')));

        await red.relaunch();
        // Users go on: what was never acknowledged is sent again (same MessageSid); the rest follows.
        await Promise.all(
          users.map(async (user, u) => {
            for (let step = 0; step < 4; step++) {
              if (acked[u][step]) continue;
              if (step > 0) await eventually(() => fake.messagesTo(user).some((m) => m.Body === QUESTIONS[step - 1]), 15000, `question ${step} for ${user}`);
              const res = await postInbound(red, token, inboundForm(user, OURS, script(u)[step], { MessageSid: sids[u][step] }));
              should(res.status).equal(200);
              acked[u][step] = true;
            }
          }),
        );
        await eventually(() => users.every((u) => fake.messagesTo(u).some((m) => String(m.Body).startsWith('Thanks'))), 30000, 'every survey to complete');

        for (const [u, user] of users.entries()) {
          const said = fake.messagesTo(user).map((m) => String(m.Body));
          // No answer lost, none stored as another question's answer, nothing out of order, nothing said twice.
          should(said).eql([...QUESTIONS, `Thanks one-${u},two-${u},three-${u}`], `${user} heard ${JSON.stringify(said)}`);
        }

        // A completed Session never comes back, also after another crash (a last step still in
        // flight at this kill runs again first, and completes).
        await red.kill();
        await red.relaunch();
        await eventually(
          async () => {
            const live = (await red.admin('GET', '/channel-sessions/sessions?environment=envCrash')).body as any[];
            return live.length === 0;
          },
          15000,
          'no live Session after every survey completed',
        );
        await new Promise((r) => setTimeout(r, 500));
        should((await red.admin('GET', '/channel-sessions/sessions?environment=envCrash')).body).eql([]);
        for (const user of completedBefore) {
          should(fake.messagesTo(user).filter((m) => String(m.Body).startsWith('Thanks')).length).equal(1);
        }
      } finally {
        await red.close();
      }
    });
  }

  it('a graceful stop (SIGTERM) with Sessions waiting and in flight loses nothing either', async function () {
    const token = `tok-term-${uid()}`;
    const red = await NodeRed.start();
    try {
      const z = uid('tab');
      await red.deploy([
        messagingEnvironment('envTerm', token, fake, red),
        tab(z, 'Slow survey'),
        ...chain(z, [
          ['telco-sms-start', 'tStart', { environment: 'envTerm' }],
          ['input-task', 'tQ1', { prompt: 'Name?', resultVariable: 'name' }],
          [
            'delay',
            'tSlow',
            {
              pauseType: 'delay',
              timeout: '2',
              timeoutUnits: 'seconds',
              rate: '1',
              nbRateUnits: '1',
              rateUnits: 'second',
              randomFirst: '1',
              randomLast: '5',
              randomUnits: 'seconds',
              drop: false,
              allowrate: false,
              outputs: 1,
            },
          ],
          ['output-task', 'tBye', { text: 'Bye {name}' }],
          ['end-task', 'tEnd'],
        ]),
      ]);
      const waiter = '+15557000001';
      const inFlight = '+15557000002';
      for (const user of [waiter, inFlight]) {
        should((await postInbound(red, token, inboundForm(user, OURS, 'hi'))).status).equal(200);
        await eventually(() => fake.messagesTo(user).some((m) => m.Body === 'Name?'), 10000, 'the question');
      }
      // This answer is acknowledged, then its step sits in the delay node when the stop comes.
      should((await postInbound(red, token, inboundForm(inFlight, OURS, 'Ada'))).status).equal(200);
      await red.stop();
      await red.relaunch();
      await eventually(() => fake.messagesTo(inFlight).some((m) => m.Body === 'Bye Ada'), 15000, 'the cut step to run again');
      should((await postInbound(red, token, inboundForm(waiter, OURS, 'Bob'))).status).equal(200);
      await eventually(() => fake.messagesTo(waiter).some((m) => m.Body === 'Bye Bob'), 15000, 'the waiting Session to go on');
      should(red.logs.join('\n')).not.match(/flow stopped without reaching an EndTask/);
    } finally {
      await red.close();
    }
  });
});
