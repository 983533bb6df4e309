import { chain, tab, uid, type FlowNode } from './flows';
import { NodeRed, eventually, type HttpResult, type StartOptions } from './node-red';
import { FakeSlack } from '../fakes/slack-api';
import { SlackEvents } from '../fakes/slack-events';
import { SIGNING_SECRET, helpDesk, teamchatEnvironment } from '../fakes/slack-flows';
import { FakeTwilioMessagingApi } from '../fakes/twilio-messaging-api';
import { ACCOUNT_SID, AUTH_TOKEN, inboundForm, messageSid, messagingEnvironment, postInbound } from '../fakes/twilio-messaging-webhooks';

export const OURS = '+15550007000';
export const SMS_START = 'sfSmsStart';
export const SLACK_START = 'sfSlackStart';
export const SMS_Q2 = 'sfQ2';

/** One SMS user of the survey: an answer per step, each with its own MessageSid (resent as it was). */
export interface SmsUser {
  user: string;
  sids: string[];
}

/**
 * The store-fault tests' Node-RED: an SMS survey (start, Q1, a slow step, Q2, thanks, end) and a
 * Slack help desk, each on its own Environment, against the fake Twilio and Slack APIs.
 */
export class StoreFaultRig {
  red!: NodeRed;
  slack!: SlackEvents;
  readonly smsToken = `tok-sf-${uid()}`;
  readonly slackToken = `tok${uid('sf')}AAAAAAAAAAAAAAAAAAAA`;

  private constructor(
    readonly twilioApi: FakeTwilioMessagingApi,
    readonly slackApi: FakeSlack,
  ) {}

  static async start(): Promise<StoreFaultRig> {
    return new StoreFaultRig(await FakeTwilioMessagingApi.start(ACCOUNT_SID, AUTH_TOKEN), await FakeSlack.start());
  }

  /** Node-RED with the durable store at `dbPath`, the flows deployed. */
  async launch(dbPath: string, options: StartOptions = {}): Promise<void> {
    this.red = await NodeRed.start({ ...options, settings: { channelSessions: { store: { path: dbPath }, sweepInterval: 1 }, ...options.settings } });
    this.slack = new SlackEvents(this.red, this.slackToken, SIGNING_SECRET, this.slackApi.team);
    await this.red.deploy(this.flows());
  }

  flows(): FlowNode[] {
    const zSms = 'sfTabSms';
    const zSlack = 'sfTabSlack';
    return [
      messagingEnvironment('sfEnvSms', this.smsToken, this.twilioApi, this.red),
      teamchatEnvironment('sfEnvSlack', this.slackToken, this.slackApi, { sessionMode: 'PerChannel' }),
      tab(zSms, 'SMS survey'),
      ...chain(zSms, [
        ['telco-sms-start', SMS_START, { environment: 'sfEnvSms' }],
        ['input-task', 'sfQ1', { prompt: 'Q1?', resultVariable: 'a1' }],
        // Long enough that a fault can land while the answer's step is still running.
        [
          'delay',
          'sfSlow',
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
        ['input-task', SMS_Q2, { prompt: 'Q2?', resultVariable: 'a2' }],
        ['output-task', 'sfThanks', { text: 'Thanks {a1},{a2}' }],
        ['end-task', 'sfEnd'],
      ]),
      tab(zSlack, 'Help desk'),
      ...helpDesk(zSlack, 'sfEnvSlack', { start: SLACK_START, hello: 'sfHello', ask: 'sfAsk', reply: 'sfReply', end: 'sfEndSlack' }),
    ];
  }

  smsUsers(n: number, prefix: string): SmsUser[] {
    return Array.from({ length: n }, (_, i) => ({ user: `${prefix}${String(i).padStart(3, '0')}`, sids: [messageSid(), messageSid(), messageSid()] }));
  }

  /** Step 0 says hi, 1 answers Q1 (`one-i`), 2 answers Q2 (`two-i`). */
  sendSms(users: SmsUser[], i: number, step: number): Promise<HttpResult> {
    const text = step === 0 ? 'hi' : `${['', 'one', 'two'][step]}-${i}`;
    return postInbound(this.red, this.smsToken, inboundForm(users[i].user, OURS, text, { MessageSid: users[i].sids[step] }));
  }

  /** What the SMS user received, in order. */
  texts(user: string): string[] {
    return this.twilioApi.messagesTo(user).map((m) => String(m.Body));
  }

  /** What the bot posted in a Slack channel, in order. */
  posted(channel: string): string[] {
    return this.slackApi
      .callsOf('chat.postMessage')
      .filter((c) => c.body.channel === channel)
      .map((c) => String(c.body.text));
  }

  /** A Slack direct message from `user` in their own DM channel, signed; the envelope is returned for a retry. */
  async direct(user: string, channel: string, text: string): Promise<{ res: HttpResult; envelope: Record<string, unknown> }> {
    const envelope = this.slack.envelope(this.slack.direct(user, text, { channel }));
    return { res: await this.slack.post(envelope), envelope };
  }

  /** The live SMS Session of a user, once it waits at `nodeId`. */
  waitingAt(user: string, nodeId: string, timeoutMs = 10000): Promise<any> {
    return eventually(
      async () => {
        const list = (await this.red.admin('GET', '/channel-sessions/sessions?environment=sfEnvSms')).body as any[];
        return list.find((s) => s.conversation === `${user}>${OURS}` && s.waitingAt?.nodeId === nodeId);
      },
      timeoutMs,
      `the Session of ${user} to wait at ${nodeId}`,
    );
  }

  async close(): Promise<void> {
    await this.red?.close();
    await this.twilioApi.close();
    await this.slackApi.close();
  }
}
