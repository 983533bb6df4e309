import should from 'should';
import { chain, node, tab, uid, type FlowNode } from '../harness/flows';
import { NodeRed, eventually } from '../harness/node-red';
import { FakeTwilioMessagingApi } from '../fakes/twilio-messaging-api';
import { ACCOUNT_SID, AUTH_TOKEN, inboundForm, messagingEnvironment, postInbound } from '../fakes/twilio-messaging-webhooks';

const PEOPLE = 10;
/** How long the fake Twilio holds the step's reply: the deploy (or stop) comes while it is held. */
const HOLD_MS = 1000;
const OURS = '+15550008100';

/**
 * A Process of two questions: q1, then 'got <answer>' (the slow reply), a core change node, then
 * q2, then 'bye <answer>'. After a deploy the token walks on through the new change node too.
 */
function twoQuestions(environment: string, z: string): FlowNode[] {
  return [
    tab(z, 'Two questions'),
    ...chain(z, [
      ['telco-sms-start', `${z}Start`, { environment }],
      ['input-task', `${z}Q1`, { prompt: 'q1', resultVariable: 'a1' }],
      ['output-task', `${z}Got`, { text: 'got {a1}' }],
      ['change', `${z}Set`, { rules: [{ t: 'set', p: 'vars.via', pt: 'msg', to: 'change', tot: 'str' }] }],
      ['input-task', `${z}Q2`, { prompt: 'q2 via {via}', resultVariable: 'a2' }],
      ['output-task', `${z}Bye`, { text: 'bye {a2}' }],
      ['end-task', `${z}End`],
    ]),
  ];
}

interface Conversations {
  users: string[];
  /** Each person's second answer: the conversation goes on to q2, 'bye', and completes, none ended. */
  finish(): Promise<void>;
}

/** The PEOPLE numbers of one test. */
function peopleOf(prefix: string): string[] {
  return Array.from({ length: PEOPLE }, (_, i) => `+1555${prefix}${String(i).padStart(5, '0')}`);
}

/**
 * PEOPLE conversations, each inside the step that answers q1: its reply ('got A<i>') is on its way
 * and held by the fake provider when `interrupt` runs (a deploy, a stop). Then every q2 arrives.
 */
async function inSlowStep(
  red: NodeRed,
  fake: FakeTwilioMessagingApi,
  where: { token: string; environment: string },
  prefix: string,
  interrupt: () => Promise<void>,
): Promise<Conversations> {
  const { token, environment } = where;
  const users = peopleOf(prefix);
  for (const user of users) should((await postInbound(red, token, inboundForm(user, OURS, 'hi'))).status).equal(200);
  await eventually(() => users.every((u) => fake.messagesTo(u).some((m) => m.Body === 'q1')), 15000, 'every q1');
  // Each reply is slow, a re-run's too.
  for (const user of users) fake.inject(user, { holdMs: HOLD_MS }, { holdMs: HOLD_MS }, { holdMs: HOLD_MS });
  for (const [i, user] of users.entries()) should((await postInbound(red, token, inboundForm(user, OURS, `A${i}`))).status).equal(200);
  // Every step is now inside its OutputTask, its reply held by the provider.
  await eventually(() => users.every((u, i) => fake.attemptsTo(u).some((m) => m.form.Body === `got A${i}`)), 15000, 'every reply to be on its way');
  await interrupt();
  await eventually(() => users.every((u) => fake.messagesTo(u).some((m) => m.Body === 'q2 via change')), 30000, 'every q2');
  return {
    users,
    finish: async () => {
      for (const [i, user] of users.entries()) should((await postInbound(red, token, inboundForm(user, OURS, `B${i}`))).status).equal(200);
      await eventually(() => users.every((u, i) => fake.messagesTo(u).some((m) => m.Body === `bye B${i}`)), 20000, 'every conversation to end');
      await eventually(
        async () => {
          const all = (await red.admin('GET', `/channel-sessions/sessions?environment=${environment}&ended=true`)).body as Array<{
            conversation: string;
            state: string;
          }>;
          const ours = all.filter((s) => users.some((u) => s.conversation.startsWith(u)));
          return ours.length === PEOPLE && ours.every((s) => s.state === 'completed');
        },
        10000,
        'every Session to complete (none ended)',
      );
      for (const [i, user] of users.entries()) {
        const bodies = fake.messagesTo(user).map((m) => m.Body);
        should(bodies.filter((b) => b === 'q2 via change').length).equal(1, `${user}: ${bodies.join(' | ')}`);
        should(bodies.filter((b) => b === `bye B${i}`).length).equal(1, `${user}: ${bodies.join(' | ')}`);
      }
    },
  };
}

/** How many times each person got the step's reply. */
function gotCounts(fake: FakeTwilioMessagingApi, users: string[]): Array<{ user: string; got: number; said: string }> {
  return users.map((user, i) => {
    const bodies = fake.messagesTo(user).map((m) => m.Body);
    return { user, got: bodies.filter((b) => b === `got A${i}`).length, said: bodies.join(' | ') };
  });
}

/**
 * A deploy while each conversation is inside a step whose reply to the provider is slow: the step
 * has the grace (`deployDrain`) to reach its next wait, its token goes on in the new flows, and
 * each person hears the step's reply once, then q2, once. No Session ends.
 */
describe('a deploy in the middle of a step whose reply is slow', function () {
  this.timeout(120000);
  let fake: FakeTwilioMessagingApi;
  let red: NodeRed;
  const token = `tok-cut-${uid()}`;
  const endedToken = `tok-ended-${uid()}`;
  let flows: FlowNode[];

  before(async function () {
    fake = await FakeTwilioMessagingApi.start(ACCOUNT_SID, AUTH_TOKEN);
    red = await NodeRed.start();
    flows = [messagingEnvironment('envCut', token, fake, red), ...twoQuestions('envCut', 'c')];
    // A Process whose token also reaches an InputTask after its Session ended (EndTask on the other wire).
    const y = 'endedTab';
    flows.push(
      messagingEnvironment('envEnded', endedToken, fake, red),
      tab(y, 'Too late'),
      node('telco-sms-start', 'eStart', y, { environment: 'envEnded' }, [['eSay']]),
      node('output-task', 'eSay', y, { text: 'hi' }, [['eEnd', 'eLater'], []]),
      node('end-task', 'eEnd', y, {}),
      node(
        'delay',
        'eLater',
        y,
        {
          pauseType: 'delay',
          timeout: '300',
          timeoutUnits: 'milliseconds',
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
        [['eAsk']],
      ),
      node('input-task', 'eAsk', y, { prompt: 'too late?', resultVariable: 'late' }, [[], []]),
    );
    await red.deploy(flows);
  });
  after(async function () {
    await red?.close();
    await fake?.close();
  });

  async function cutBy(prefix: string, deploy: () => Promise<void>): Promise<void> {
    const logsBefore = red.logs.length;
    const talk = await inSlowStep(red, fake, { token, environment: 'envCut' }, prefix, deploy);
    await talk.finish();
    for (const { user, got, said } of gotCounts(fake, talk.users)) should(got).equal(1, `${user}: ${said}`);
    const logs = red.logs.slice(logsBefore).join('\n');
    should(logs).match(/\[info\] \[channel-sessions\] the flows stop: 10 step\(s\) in progress on the stopped nodes have up to 8 s \(deployDrain\)/);
    should(logs).not.match(/were cut/);
    should(logs).not.match(/flow stopped without reaching an EndTask/);
    should(logs).not.match(/token of ended Session/);
  }

  it('a token of an ended Session reaching an InputTask is warned, not only said at debug level', async function () {
    const user = '+15557400001';
    const from = red.logs.length;
    should((await postInbound(red, endedToken, inboundForm(user, OURS, 'hi'))).status).equal(200);
    const line = await eventually(() => red.logs.slice(from).find((l) => /token of ended Session \w+ dropped/.test(l)), 10000, 'the warning');
    should(line).match(/\[warn\] \[input-task:eAsk\]/);
    should(fake.messagesTo(user).map((m) => m.Body)).eql(['hi']);
  });

  it('a full deploy', async function () {
    await cutBy('71', () => red.deploy(flows));
  });

  it('a flows-only deploy that restarts the flow', async function () {
    // The tab's own environment changed: Node-RED restarts every node of the flow, in a new flow.
    flows = flows.map((n) => (n.id === 'c' ? { ...n, env: [{ name: 'DEPLOYED', value: uid(), type: 'str' }] } : n));
    await cutBy('72', async () => {
      const res = await red.admin('POST', '/flows', { flows }, { 'Node-RED-API-Version': 'v2', 'Node-RED-Deployment-Type': 'flows' });
      should(res.status).equal(200);
    });
  });

  it('a modified-nodes deploy that restarts the slow node and the next one', async function () {
    const mark = uid();
    flows = flows.map((n) => (n.id === 'cGot' || n.id === 'cQ2' ? { ...n, name: `${n.id} ${mark}` } : n));
    await cutBy('73', async () => {
      const res = await red.admin('POST', '/flows', { flows }, { 'Node-RED-API-Version': 'v2', 'Node-RED-Deployment-Type': 'nodes' });
      should(res.status).equal(200);
    });
  });

  it('a full deploy that removes the node the reply goes on to: the step is cut, named, and runs again in the new flows', async function () {
    // The change node after the slow reply is replaced by another (a new id) doing the same.
    flows = flows.flatMap((n) => {
      if (n.id === 'cSet') return [{ ...n, id: 'cSet2' }];
      if (n.id === 'cGot') return [{ ...n, wires: [['cSet2'], []] }];
      return [n];
    });
    const logsBefore = red.logs.length;
    const talk = await inSlowStep(red, fake, { token, environment: 'envCut' }, '78', () => red.deploy(flows));
    await talk.finish();
    for (const { user, got, said } of gotCounts(fake, talk.users)) should(got).be.within(1, 2, `${user}: ${said}`);
    const logs = red.logs.slice(logsBefore).join('\n');
    should(logs).match(
      /\[warn\] \[channel-sessions\] 10 step\(s\) in progress were cut: the deploy removed the node their message was on its way to; .* Sessions: \w+/,
    );
  });
});

/**
 * The documented limit: a step still running when the grace is over is cut and runs again from
 * its recorded message, so its reply may go out twice; the conversation goes on all the same.
 */
describe('a deploy in the middle of a step slower than the grace', function () {
  this.timeout(120000);
  let fake: FakeTwilioMessagingApi;
  let red: NodeRed;
  const token = `tok-short-${uid()}`;
  let flows: FlowNode[];

  before(async function () {
    fake = await FakeTwilioMessagingApi.start(ACCOUNT_SID, AUTH_TOKEN);
    red = await NodeRed.start({ settings: { channelSessions: { deployDrain: 100 } } });
    flows = [messagingEnvironment('envShort', token, fake, red), ...twoQuestions('envShort', 's')];
    await red.deploy(flows);
  });
  after(async function () {
    await red?.close();
    await fake?.close();
  });

  it('is cut, named in a warning, and runs again', async function () {
    const logsBefore = red.logs.length;
    const talk = await inSlowStep(red, fake, { token, environment: 'envShort' }, '74', () => red.deploy(flows));
    await talk.finish();
    for (const { user, got, said } of gotCounts(fake, talk.users)) should(got).be.within(1, 2, `${user}: ${said}`);
    const logs = red.logs.slice(logsBefore).join('\n');
    const warning = /\[warn\] \[channel-sessions\] 10 step\(s\) still running after the 0.1 s grace \(deployDrain\) were cut; .* Sessions: (.*)/.exec(logs);
    should(warning).not.be.null();
    const sessions = (await red.admin('GET', '/channel-sessions/sessions?environment=envShort&ended=true')).body as Array<{ id: string }>;
    for (const id of warning?.[1].split(', ') ?? []) should(sessions.map((s) => s.id)).containEql(id);
  });

  it('a stop: the steps still running are named before the exit, and run again after the start', async function () {
    const logsBefore = red.logs.length;
    const talk = await inSlowStep(red, fake, { token, environment: 'envShort' }, '77', async () => {
      await red.stop('SIGTERM');
      const logs = red.logs.slice(logsBefore).join('\n');
      should(logs).match(/\[info\] \[channel-sessions\] stopping: waiting up to 0.1 s \(deployDrain\) for 10 step\(s\) in progress/);
      should(logs).match(/\[warn\] \[channel-sessions\] 10 step\(s\) still running after the 0.1 s grace \(deployDrain\) were cut; .* Sessions: \w+/);
      await red.relaunch();
    });
    await talk.finish();
    for (const { user, got, said } of gotCounts(fake, talk.users)) should(got).be.within(1, 2, `${user}: ${said}`);
  });
});

/**
 * A stop (SIGTERM, SIGINT) while each conversation is inside a step whose reply is slow: the
 * runtime waits for the steps before Node-RED closes the flows, so each step reaches q2 and is
 * saved before the process exits; after the restart the conversations go on, nothing said twice.
 */
describe('a stop in the middle of a step whose reply is slow', function () {
  this.timeout(120000);
  let fake: FakeTwilioMessagingApi;
  let red: NodeRed;
  const token = `tok-stop-${uid()}`;

  before(async function () {
    fake = await FakeTwilioMessagingApi.start(ACCOUNT_SID, AUTH_TOKEN);
    red = await NodeRed.start();
    await red.deploy([messagingEnvironment('envStop', token, fake, red), ...twoQuestions('envStop', 't')]);
  });
  after(async function () {
    await red?.close();
    await fake?.close();
  });

  for (const [signal, prefix] of [
    ['SIGTERM', '75'],
    ['SIGINT', '76'],
  ] as const) {
    it(`${signal}: the step in progress finishes before the process exits`, async function () {
      const logsBefore = red.logs.length;
      const latecomer = `+1555${prefix}99999`;
      const talk = await inSlowStep(red, fake, { token, environment: 'envStop' }, prefix, async () => {
        const from = red.logs.length;
        const stopped = red.stop(signal);
        await eventually(() => red.logs.slice(from).some((l) => /stopping: waiting up to/.test(l)), 5000, 'the runtime to wait for its steps');
        // A message while the runtime waits for its steps is recorded and waits: no step begins now.
        should((await postInbound(red, token, inboundForm(latecomer, OURS, 'hi'))).status).equal(200);
        await stopped;
        should(fake.messagesTo(latecomer)).be.empty();
        // Sent before the process ended: every step in progress went on to q2.
        const bodies = peopleOf(prefix).map(
          (user) =>
            `${user}: ${fake
              .messagesTo(user)
              .map((m) => m.Body)
              .join(' | ')}`,
        );
        should(bodies.filter((said) => said.endsWith('q2 via change'))).have.length(PEOPLE, bodies.join('\n'));
      });
      const logs = red.logs.slice(logsBefore).join('\n');
      should(logs).match(/\[info\] \[channel-sessions\] stopping: waiting up to 8 s \(deployDrain\) for 10 step\(s\) in progress/);
      should(logs).not.match(/were cut/);
      await red.relaunch();
      await eventually(() => fake.messagesTo(latecomer).some((m) => m.Body === 'q1'), 15000, 'q1 to the message that came during the stop');
      await talk.finish();
      should(fake.messagesTo(latecomer).map((m) => m.Body)).eql(['q1']);
      for (const { user, got, said } of gotCounts(fake, talk.users)) should(got).equal(1, `${user}: ${said}`);
    });
  }
});

describe('deployDrain in settings.js', function () {
  this.timeout(60000);
  let red: NodeRed | undefined;
  after(async () => red?.close());

  it('a value that is not milliseconds is named in a warning and the default applies', async function () {
    red = await NodeRed.start({ settings: { channelSessions: { deployDrain: 'soon' } } });
    await red.deploy([tab('d', 'Nothing')]);
    should(red.logs.join('\n')).match(
      /\[warn\] \[channel-sessions\] settings.js channelSessions.deployDrain is "soon", not a number of milliseconds \(0 or more\); using 8000/,
    );
  });
});
