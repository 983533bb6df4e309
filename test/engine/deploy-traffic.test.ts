import should from 'should';
import { node, tab, type FlowNode } from '../harness/flows';
import { eventually, NodeRed, type HttpResult } from '../harness/node-red';
import { FakeSlack } from '../fakes/slack-api';
import { SlackEvents } from '../fakes/slack-events';
import { SIGNING_SECRET, teamchatEnvironment } from '../fakes/slack-flows';
import { FakeTwilioMessagingApi } from '../fakes/twilio-messaging-api';
import { ACCOUNT_SID, AUTH_TOKEN, inboundForm, messagingEnvironment, postInbound } from '../fakes/twilio-messaging-webhooks';

const OURS = '+15550004000';
const SMS_TOKEN = 'tok-deploy-traffic-sms-0001';
const SLACK_TOKEN = 'deployTrafficSlackToken00001';
/** A message every this many ms on each of SMS and Slack, answered or not (steady, not lock-step). */
const EVERY_MS = 25;
const FILLER_NODES = 200;

/**
 * Webhooks arriving while a deploy restarts the flows wait for them and are handled: signed SMS
 * and Slack traffic runs through several full deploys and a modified-nodes deploy that restarts
 * both Environments. No request is answered 404, and every acknowledged message gets its reply.
 */
describe('deploys under steady webhook traffic', function () {
  this.timeout(120000);
  let red: NodeRed;
  let twilio: FakeTwilioMessagingApi;
  let slack: FakeSlack;
  let events: SlackEvents;

  const flows = (revision: number): FlowNode[] => [
    messagingEnvironment('dtSmsEnv', SMS_TOKEN, twilio, red, { name: `sms env ${revision}` }),
    teamchatEnvironment('dtSlackEnv', SLACK_TOKEN, slack, { name: `slack env ${revision}`, sessionMode: 'PerThread' }),
    tab('dtTab', 'Echo'),
    node('telco-sms-start', 'dtSmsStart', 'dtTab', { environment: 'dtSmsEnv' }, [['dtSmsSay']]),
    node('output-task', 'dtSmsSay', 'dtTab', { text: 'sms {message.text}' }, [['dtEnd'], []]),
    node('teamchat-start', 'dtSlackStart', 'dtTab', { environment: 'dtSlackEnv', variable: 'teamchat' }, [['dtSlackSay']]),
    node('output-task', 'dtSlackSay', 'dtTab', { text: 'slack {teamchat.text}' }, [['dtEnd'], []]),
    node('end-task', 'dtEnd', 'dtTab', {}),
    // A flow of some size, so that a restart takes as long as a real one (each function node
    // compiles its script when it starts).
    tab('dtFiller', 'Other work'),
    ...Array.from({ length: FILLER_NODES }, (_, i) =>
      node('function', `dtFn${i}`, 'dtFiller', { func: `msg.n = ${i};\nreturn msg;`, outputs: 1, finalize: '', initialize: '' }, [[]]),
    ),
  ];

  before(async function () {
    twilio = await FakeTwilioMessagingApi.start(ACCOUNT_SID, AUTH_TOKEN);
    slack = await FakeSlack.start();
    red = await NodeRed.start({ settings: { runtimeState: { enabled: true } } });
    events = new SlackEvents(red, SLACK_TOKEN, SIGNING_SECRET, slack.team);
    await red.deploy(flows(0));
  });
  after(async function () {
    await red?.close();
    await twilio?.close();
    await slack?.close();
  });

  /** A modified-nodes deploy, as the editor's default Deploy button sends it. */
  async function deployModified(revision: number): Promise<void> {
    const before = red.logs.filter((l) => /\] Started modified nodes/.test(l)).length;
    const res = await red.admin('POST', '/flows', { flows: flows(revision) }, { 'Node-RED-API-Version': 'v2', 'Node-RED-Deployment-Type': 'nodes' });
    should(res.status).equal(200, res.text);
    await eventually(() => red.logs.filter((l) => /\] Started modified nodes/.test(l)).length > before, 20000, 'the modified nodes to start');
  }

  it('answers no webhook 404 during full and modified-nodes deploys, and every acknowledged message is replied to', async () => {
    const sent: Array<{ kind: 'sms' | 'slack'; text: string; user: string; answer: Promise<HttpResult> }> = [];
    let n = 0;
    const tick = () => {
      n += 1;
      const smsUser = `+1555430${String(n).padStart(4, '0')}`;
      const smsText = `m${n}`;
      sent.push({ kind: 'sms', text: smsText, user: smsUser, answer: postInbound(red, SMS_TOKEN, inboundForm(smsUser, OURS, smsText)) });
      const slackUser = `U0DT${String(n).padStart(5, '0')}`;
      const slackText = `s${n}`;
      sent.push({ kind: 'slack', text: slackText, user: slackUser, answer: events.post(events.envelope(events.direct(slackUser, slackText))) });
    };
    const traffic = setInterval(tick, EVERY_MS);
    try {
      await new Promise((r) => setTimeout(r, 300));
      let revision = 0;
      for (const kind of ['full', 'nodes', 'full', 'nodes', 'full'] as const) {
        revision += 1;
        if (kind === 'full') await red.deploy(flows(revision));
        else await deployModified(revision);
        await new Promise((r) => setTimeout(r, 200));
      }
    } finally {
      clearInterval(traffic);
    }

    const answers = await Promise.all(sent.map(async (s) => ({ ...s, status: (await s.answer).status })));
    const notOk = answers.filter((a) => a.status !== 200).map((a) => `${a.kind} ${a.text}: ${a.status}`);
    notOk.should.eql([], 'every webhook answered 200');
    const smsReplies = () => new Set(twilio.messages().map((m) => String(m.Body)));
    const slackReplies = () => new Set(slack.callsOf('chat.postMessage').map((c) => String(c.body.text)));
    const missing = () => {
      const sms = smsReplies();
      const posted = slackReplies();
      return answers.filter((a) => !(a.kind === 'sms' ? sms.has(`sms ${a.text}`) : posted.has(`slack ${a.text}`))).map((a) => `${a.kind} ${a.text}`);
    };
    await eventually(() => missing().length === 0, 20000, 'a reply to every acknowledged message').catch(() => undefined);
    if (missing().length)
      console.log(
        red.logs
          .filter((l) => /warn|error/i.test(l))
          .slice(-60)
          .join('\n'),
      );
    missing().should.eql([], 'a reply to every acknowledged message');
    // The traffic did overlap the restarts: four deploys at one message per 25 ms each way.
    answers.length.should.be.above(100);
  });

  it('a token still unknown after a deploy answers 404 as before, once the flows have started', async () => {
    const started = Date.now();
    (await postInbound(red, 'tok-never-deployed', inboundForm('+15554400001', OURS, 'hi'))).status.should.equal(404);
    (Date.now() - started).should.be.below(1000);
    // A deploy that removes the SMS Environment: a request sent meanwhile waits for it, then is refused.
    const withoutSms = flows(100).filter((n) => !['dtSmsEnv', 'dtSmsStart', 'dtSmsSay'].includes(n.id));
    const stopping = red.logs.filter((l) => /\] Stopping flows/.test(l)).length;
    const deploying = red.deploy(withoutSms);
    await eventually(() => red.logs.filter((l) => /\] Stopping flows/.test(l)).length > stopping, 10000, 'the deploy to begin');
    const during = Date.now();
    (await postInbound(red, SMS_TOKEN, inboundForm('+15554400002', OURS, 'hi'))).status.should.equal(404);
    (Date.now() - during).should.be.below(8000);
    await deploying;
    await red.deploy(flows(101));
    (await postInbound(red, SMS_TOKEN, inboundForm('+15554400003', OURS, 'back'))).status.should.equal(200);
    await eventually(() => twilio.messagesTo('+15554400003').length === 1, 10000, 'the reply after the redeploy');
  });

  it('flows stopped through the admin API: webhooks answer 404 at once, not after the wait; started again, they are handled', async () => {
    (await red.admin('POST', '/flows/state', { state: 'stop' })).status.should.equal(200);
    try {
      const started = Date.now();
      (await postInbound(red, SMS_TOKEN, inboundForm('+15554400004', OURS, 'hi'))).status.should.equal(404);
      (await events.post(events.envelope(events.direct('U0DTSTOP1', 'hi')))).status.should.equal(404);
      (Date.now() - started).should.be.below(2000);
    } finally {
      (await red.admin('POST', '/flows/state', { state: 'start' })).status.should.equal(200);
    }
    const again = await postInbound(red, SMS_TOKEN, inboundForm('+15554400005', OURS, 'again'));
    if (again.status !== 200) console.log(red.logs.slice(-30).join('\n'));
    again.status.should.equal(200);
    await eventually(() => twilio.messagesTo('+15554400005').length === 1, 10000, 'the reply once the flows run again');
  });
});
