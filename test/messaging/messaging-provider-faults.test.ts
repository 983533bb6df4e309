import 'should';
import { node, tab, uid } from '../harness/flows';
import { eventually, NodeRed } from '../harness/node-red';
import { FakeTwilioMessagingApi } from '../fakes/twilio-messaging-api';
import { ACCOUNT_SID, AUTH_TOKEN, inboundForm, messagingEnvironment, postInbound, sessionWhen } from '../fakes/twilio-messaging-webhooks';

const OURS = '+15550003000';

/**
 * A real Node-RED replying to SMS through the fake Twilio API while it answers 429, 503 or resets
 * the connection: what the user receives, and what the error branch gets when Twilio stays down.
 */
describe("messaging replies when Twilio's REST API fails", function () {
  this.timeout(30000);
  let red: NodeRed;
  let fake: FakeTwilioMessagingApi;
  const token = 'tok-faults-' + uid();
  let n = 0;
  const user = () => `+1555410${String(++n).padStart(4, '0')}`;

  before(async () => {
    fake = await FakeTwilioMessagingApi.start(ACCOUNT_SID, AUTH_TOKEN);
    red = await NodeRed.start();
    const z = uid('tab');
    await red.deploy([
      messagingEnvironment('envFaults', token, fake, red),
      tab(z, 'Reply'),
      node('telco-sms-start', 'fStart', z, { environment: 'envFaults' }, [['fSay']]),
      node('output-task', 'fSay', z, { text: 'you said {message.text}' }, [['fEnd'], ['fFailed']]),
      node('output-task', 'fFailed', z, { text: 'failed {error.code}: {error.message}' }, [['fEnd'], []]),
      node('end-task', 'fEnd', z, {}),
    ]);
  });
  after(async () => {
    await red?.close();
    await fake?.close();
  });

  async function converse(to: string): Promise<any> {
    (await postInbound(red, token, inboundForm(to, OURS, 'hello'))).status.should.equal(200);
    return sessionWhen(red, 'envFaults', to, OURS, (s) => s.state === 'completed' || s.state === 'ended', 'the Session to finish');
  }

  for (const [name, fault] of [
    ['a 429 with Retry-After: 1', { status: 429, retryAfter: '1', code: 20429, message: 'Too Many Requests' }],
    ['a 503', { status: 503 }],
    ['a connection reset', { reset: true as const }],
  ] as const) {
    it(`after ${name}, the reply is delivered once and the Session completes`, async () => {
      const to = user();
      fake.inject(to, fault);
      const session = await converse(to);
      session.state.should.equal('completed');
      fake
        .messagesTo(to)
        .map((m) => m.Body)
        .should.eql(['you said hello']);
      fake.attemptsTo(to).should.have.length(2);
    });
  }

  it('when Twilio answers 503 three times, the error branch gets a 4001 saying so, and the reply never went out', async () => {
    const to = user();
    const down = { status: 503, code: 20503, message: 'Service is unavailable' };
    fake.inject(to, down, down, down);
    const session = await converse(to);
    session.state.should.equal('completed');
    fake
      .attemptsTo(to)
      .map((r) => r.form.Body)
      .should.eql([
        'you said hello',
        'you said hello',
        'you said hello',
        `failed 4001: Twilio did not take the message to ${to}: Service is unavailable (Twilio error 20503, HTTP 503); 3 attempts`,
      ]);
    fake.messagesTo(to).should.have.length(1);
  });

  it("a refusal quoting the StatusCallback says what Twilio said without the Environment's token", async () => {
    const to = user();
    const mark = red.logs.length;
    fake.inject(to, { status: 400, code: 21609, message: (form) => `Invalid StatusCallback URL: ${String(form.StatusCallback)}` });
    const session = await converse(to);
    const [refused, failed] = fake.attemptsTo(to).map((r) => String(r.form.Body));
    refused.should.equal('you said hello');
    String(fake.attemptsTo(to)[0].form.StatusCallback).should.containEql(token);
    failed.should.startWith(`failed 4001: Twilio rejected the message to ${to}: Invalid StatusCallback URL: `);
    failed.should.containEql('/api/TelcoModule/Messaging/status/');
    failed.should.not.containEql(token);
    const logged = (session.log as Array<{ message: string }>).map((e) => e.message);
    logged.some((m) => m.includes('Invalid StatusCallback URL')).should.be.true(logged.join(' | '));
    logged.filter((m) => m.includes(token)).should.eql([]);
    red.logs
      .slice(mark)
      .filter((l) => l.includes(token))
      .should.eql([]);
  });

  it('when the connection is reset three times, the error branch gets a 4001 saying Twilio could not be reached', async () => {
    const to = user();
    fake.inject(to, { reset: true }, { reset: true }, { reset: true });
    await converse(to);
    const [failed] = fake.messagesTo(to).map((m) => String(m.Body));
    failed.should.match(
      new RegExp(
        `^failed 4001: Twilio could not be reached for the message to \\${to}: the connection was reset before Twilio answered \\(\\w+\\); 3 attempts$`,
      ),
    );
    fake.attemptsTo(to).should.have.length(4);
  });

  it('when the answer to a send does not end, it is read no further than 4 MB: the connection is closed, the error branch gets a 4001 saying so, and the send is not tried again', async () => {
    const to = user();
    fake.inject(to, { endless: true });
    const session = await converse(to);
    session.state.should.equal('completed');
    fake
      .attemptsTo(to)
      .map((r) => r.form.Body)
      .should.eql([
        'you said hello',
        `failed 4001: Twilio answered HTTP 201 for the message to ${to} with more than the 4 MB an API answer may have, so it was not read; it was not sent again, as Twilio may have taken it`,
      ]);
    const [endless] = fake.attemptsTo(to);
    (await eventually(() => endless.closedEarly !== undefined || undefined, 5000, 'the endless answer to stop')).should.be.true();
    endless.closedEarly!.should.be.true();
  });
});
