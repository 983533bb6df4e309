import should from 'should';
import { chain, tab, uid, type FlowNode } from '../harness/flows';
import { NodeRed, eventually } from '../harness/node-red';
import { FakeTwilioMessagingApi } from '../fakes/twilio-messaging-api';
import { ACCOUNT_SID, AUTH_TOKEN, inboundForm, messagingEnvironment, postInbound } from '../fakes/twilio-messaging-webhooks';

/**
 * Deploys while Sessions are mid-step: each user's answer is acknowledged and its step sits in a
 * slow node (a delay) when the deploy comes. No Session is cut ("the flow stopped without reaching
 * an EndTask"): each step finishes or runs again from its recorded message, and every user hears
 * the end of the dialogue.
 */
describe('deploys with steps in flight', function () {
  this.timeout(90000);
  const OURS = '+15550008000';
  let fake: FakeTwilioMessagingApi;
  let red: NodeRed;
  const token = `tok-deploy-${uid()}`;
  const slowToken = `tok-deploy-slow-${uid()}`;
  let flows: FlowNode[];

  before(async function () {
    fake = await FakeTwilioMessagingApi.start(ACCOUNT_SID, AUTH_TOKEN);
    red = await NodeRed.start();
    const z = uid('tab');
    flows = [
      messagingEnvironment('envDeploy', token, fake, red),
      tab(z, 'Slow survey'),
      ...chain(z, [
        ['telco-sms-start', 'dStart', { environment: 'envDeploy' }],
        ['input-task', 'dQ', { prompt: 'Name?', resultVariable: 'name' }],
        [
          'delay',
          'dSlow',
          {
            pauseType: 'delay',
            timeout: '1500',
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
        ],
        ['output-task', 'dBye', { text: 'Bye {name}' }],
        ['end-task', 'dEnd'],
      ]),
      // A step that takes longer than the grace a deploy gives (a slow AI call, say), and a tab
      // of its own for a deploy to change.
      messagingEnvironment('envDeploySlow', slowToken, fake, red),
      tab('tabSlowAnswer', 'Slow answer'),
      ...chain('tabSlowAnswer', [
        ['telco-sms-start', 'sStart', { environment: 'envDeploySlow' }],
        ['input-task', 'sQ', { prompt: 'Question?', resultVariable: 'q' }],
        ['output-task', 'sThinking', { text: 'Thinking about {q}' }],
        ['delay', 'sSlow', { pauseType: 'delay', timeout: '7', timeoutUnits: 'seconds', drop: false, allowrate: false, outputs: 1 }],
        ['output-task', 'sAnswer', { text: 'Answer to {q}' }],
        ['end-task', 'sEnd'],
      ]),
      tab('tabElsewhere', 'Elsewhere'),
      { id: 'eFn', type: 'function', z: 'tabElsewhere', name: 'elsewhere', func: 'return msg;', outputs: 1, wires: [[]] },
    ];
    await red.deploy(flows);
  });
  after(async function () {
    await red?.close();
    await fake?.close();
  });

  async function answerThenDeploy(prefix: string, deploy: () => Promise<void>): Promise<void> {
    const users = Array.from({ length: 8 }, (_, i) => `+1555${prefix}${String(i).padStart(5, '0')}`);
    for (const user of users) should((await postInbound(red, token, inboundForm(user, OURS, 'hi'))).status).equal(200);
    await eventually(() => users.every((u) => fake.messagesTo(u).some((m) => m.Body === 'Name?')), 10000, 'every question');
    for (const [i, user] of users.entries()) should((await postInbound(red, token, inboundForm(user, OURS, `N${i}`))).status).equal(200);
    // Every step now sits in the delay node.
    await deploy();
    await eventually(() => users.every((u, i) => fake.messagesTo(u).some((m) => m.Body === `Bye N${i}`)), 20000, 'every dialogue to end');
    // The last step of each dialogue (Bye, then End) commits just after its reply went out.
    await eventually(
      async () => {
        const live = (await red.admin('GET', '/channel-sessions/sessions?environment=envDeploy')).body as any[];
        return live.filter((s) => users.some((u) => s.conversation.startsWith(u))).length === 0;
      },
      10000,
      'every Session to complete',
    );
    should(red.logs.join('\n')).not.match(/flow stopped without reaching an EndTask/);
  }

  it('a full deploy: no Session is cut', async function () {
    await answerThenDeploy('61', () => red.deploy(flows));
  });

  it('a modified-nodes deploy that restarts the slow node: no Session is cut', async function () {
    const changed = flows.map((n) => (n.id === 'dSlow' ? { ...n, name: 'slower' } : n));
    await answerThenDeploy('62', async () => {
      const res = await red.admin('POST', '/flows', { flows: changed }, { 'Node-RED-API-Version': 'v2', 'Node-RED-Deployment-Type': 'nodes' });
      should(res.status).equal(200);
    });
    flows = changed;
  });

  it('a modified-nodes deploy of another node: steps in the slow node finish on their own, once', async function () {
    const changed = flows.map((n) => (n.id === 'dBye' ? { ...n, name: 'bye' } : n));
    const users = Array.from({ length: 4 }, (_, i) => `+155563${String(i).padStart(5, '0')}`);
    for (const user of users) should((await postInbound(red, token, inboundForm(user, OURS, 'hi'))).status).equal(200);
    await eventually(() => users.every((u) => fake.messagesTo(u).some((m) => m.Body === 'Name?')), 10000, 'every question');
    for (const [i, user] of users.entries()) should((await postInbound(red, token, inboundForm(user, OURS, `M${i}`))).status).equal(200);
    const res = await red.admin('POST', '/flows', { flows: changed }, { 'Node-RED-API-Version': 'v2', 'Node-RED-Deployment-Type': 'nodes' });
    should(res.status).equal(200);
    await eventually(() => users.every((u, i) => fake.messagesTo(u).some((m) => m.Body === `Bye M${i}`)), 20000, 'every dialogue to end');
    await new Promise((r) => setTimeout(r, 500));
    for (const [i, user] of users.entries()) should(fake.messagesTo(user).filter((m) => m.Body === `Bye M${i}`).length).equal(1);
  });

  it('a modified-flows deploy of another tab: a step running past the grace finishes once, its replies not sent again', async function () {
    const changed = flows.map((n) => (n.id === 'eFn' ? { ...n, name: 'changed elsewhere' } : n));
    // As the editor deploys: credentials are sent only when they changed (a node sent with them counts as changed).
    const asTheEditorSends = changed.map(({ credentials: _kept, ...n }) => n);
    const users = Array.from({ length: 3 }, (_, i) => `+155564${String(i).padStart(5, '0')}`);
    for (const user of users) should((await postInbound(red, slowToken, inboundForm(user, OURS, 'hi'))).status).equal(200);
    await eventually(() => users.every((u) => fake.messagesTo(u).some((m) => m.Body === 'Question?')), 10000, 'every question');
    for (const [i, user] of users.entries()) should((await postInbound(red, slowToken, inboundForm(user, OURS, `Q${i}`))).status).equal(200);
    await eventually(() => users.every((u, i) => fake.messagesTo(u).some((m) => m.Body === `Thinking about Q${i}`)), 10000, 'every step in the slow node');
    const logsBefore = red.logs.length;
    const res = await red.admin('POST', '/flows', { flows: asTheEditorSends }, { 'Node-RED-API-Version': 'v2', 'Node-RED-Deployment-Type': 'flows' });
    should(res.status).equal(200);
    flows = changed;
    await eventually(() => users.every((u, i) => fake.messagesTo(u).some((m) => m.Body === `Answer to Q${i}`)), 20000, 'every answer');
    await new Promise((r) => setTimeout(r, 500));
    for (const [i, user] of users.entries()) {
      should(fake.messagesTo(user).filter((m) => m.Body === `Thinking about Q${i}`).length).equal(1);
      should(fake.messagesTo(user).filter((m) => m.Body === `Answer to Q${i}`).length).equal(1);
    }
    should(red.logs.slice(logsBefore).join('\n')).not.match(/cut by the deploy/);
  });
});
