import should from 'should';
import { chain, node, tab, uid, type FlowNode } from '../harness/flows';
import { NodeRed, eventually } from '../harness/node-red';
import { FakeTwilioMessagingApi } from '../fakes/twilio-messaging-api';
import { ACCOUNT_SID, AUTH_TOKEN, inboundForm, messagingEnvironment, postInbound } from '../fakes/twilio-messaging-webhooks';

const PEOPLE = 10;
/** How long the fake Twilio holds the cut step's reply: the deploy comes while it is held. */
const HOLD_MS = 1000;

/**
 * A deploy while each conversation is inside a step whose reply to the provider is slow: the step
 * is cut, runs again from its recorded message, and the conversation goes on. The old step's
 * token stops in the closed flow only after its reply returns, when the Session is already in the
 * re-run step; that stop is a cut, not "the flow stopped", so no Session ends. Each person hears
 * the cut step's reply at most twice (the at-least-once rule), then q2, once.
 */
describe('a deploy in the middle of a step whose reply is slow', function () {
  this.timeout(120000);
  const OURS = '+15550008100';
  let fake: FakeTwilioMessagingApi;
  let red: NodeRed;
  const token = `tok-cut-${uid()}`;
  const endedToken = `tok-ended-${uid()}`;
  let flows: FlowNode[];

  before(async function () {
    fake = await FakeTwilioMessagingApi.start(ACCOUNT_SID, AUTH_TOKEN);
    red = await NodeRed.start();
    const z = 'cutTab';
    flows = [
      messagingEnvironment('envCut', token, fake, red),
      tab(z, 'Two questions'),
      ...chain(z, [
        ['telco-sms-start', 'cStart', { environment: 'envCut' }],
        ['input-task', 'cQ1', { prompt: 'q1', resultVariable: 'a1' }],
        ['output-task', 'cGot', { text: 'got {a1}' }],
        ['input-task', 'cQ2', { prompt: 'q2', resultVariable: 'a2' }],
        ['output-task', 'cBye', { text: 'bye {a2}' }],
        ['end-task', 'cEnd'],
      ]),
    ];
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
    const users = Array.from({ length: PEOPLE }, (_, i) => `+1555${prefix}${String(i).padStart(5, '0')}`);
    for (const user of users) should((await postInbound(red, token, inboundForm(user, OURS, 'hi'))).status).equal(200);
    await eventually(() => users.every((u) => fake.messagesTo(u).some((m) => m.Body === 'q1')), 15000, 'every q1');
    // Each reply is slow, the re-run's too: the old step's token stops while the re-run runs.
    for (const user of users) fake.inject(user, { holdMs: HOLD_MS }, { holdMs: HOLD_MS }, { holdMs: HOLD_MS });
    for (const [i, user] of users.entries()) should((await postInbound(red, token, inboundForm(user, OURS, `A${i}`))).status).equal(200);
    // Every step is now inside its OutputTask, its reply held by the provider.
    await eventually(() => users.every((u, i) => fake.attemptsTo(u).some((m) => m.form.Body === `got A${i}`)), 15000, 'every reply to be on its way');
    const logsBefore = red.logs.length;
    await deploy();
    await eventually(() => users.every((u) => fake.messagesTo(u).some((m) => m.Body === 'q2')), 30000, 'every q2');
    for (const [i, user] of users.entries()) should((await postInbound(red, token, inboundForm(user, OURS, `B${i}`))).status).equal(200);
    await eventually(() => users.every((u, i) => fake.messagesTo(u).some((m) => m.Body === `bye B${i}`)), 20000, 'every conversation to end');
    await eventually(
      async () => {
        const all = (await red.admin('GET', '/channel-sessions/sessions?environment=envCut&ended=true')).body as Array<{ conversation: string; state: string }>;
        const ours = all.filter((s) => users.some((u) => s.conversation.startsWith(u)));
        return ours.length === PEOPLE && ours.every((s) => s.state === 'completed');
      },
      10000,
      'every Session to complete (none ended)',
    );
    for (const [i, user] of users.entries()) {
      const bodies = fake.messagesTo(user).map((m) => m.Body);
      should(bodies.filter((b) => b === `got A${i}`).length).be.within(1, 2, `${user}: ${bodies.join(' | ')}`);
      should(bodies.filter((b) => b === 'q2').length).equal(1, `${user}: ${bodies.join(' | ')}`);
      should(bodies.filter((b) => b === `bye B${i}`).length).equal(1, `${user}: ${bodies.join(' | ')}`);
    }
    const logs = red.logs.slice(logsBefore).join('\n');
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
    flows = flows.map((n) => (n.id === 'cGot' ? { ...n, name: `got ${uid()}` } : n));
    await cutBy('72', async () => {
      const res = await red.admin('POST', '/flows', { flows }, { 'Node-RED-API-Version': 'v2', 'Node-RED-Deployment-Type': 'flows' });
      should(res.status).equal(200);
    });
  });

  it('a modified-nodes deploy that restarts the slow node', async function () {
    flows = flows.map((n) => (n.id === 'cGot' ? { ...n, name: `got ${uid()}` } : n));
    await cutBy('73', async () => {
      const res = await red.admin('POST', '/flows', { flows }, { 'Node-RED-API-Version': 'v2', 'Node-RED-Deployment-Type': 'nodes' });
      should(res.status).equal(200);
    });
  });
});
