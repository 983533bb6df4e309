import should from 'should';
import { chain, tab, uid } from '../harness/flows';
import { NodeRed, eventually } from '../harness/node-red';
import { FakeTwilioMessagingApi, type SendFault } from '../fakes/twilio-messaging-api';
import { ACCOUNT_SID, AUTH_TOKEN, inboundForm, messagingEnvironment, postInbound } from '../fakes/twilio-messaging-webhooks';

/**
 * Node-RED killed (SIGKILL) while a reply's request is at the provider, which made the message but
 * had not answered: the step runs again after the restart, and the reply is looked up in the
 * provider's Messages list before it is sent again. The person hears each thing once; where the
 * list cannot be read, the reply goes again and the log says, once, that it may be a duplicate.
 */
describe('SMS: a reply in flight at a crash is found at the provider, not sent again', function () {
  this.timeout(90000);
  const OURS = '+15550007000';
  let fake: FakeTwilioMessagingApi;
  let red: NodeRed;
  let token: string;

  before(async function () {
    fake = await FakeTwilioMessagingApi.start(ACCOUNT_SID, AUTH_TOKEN);
    red = await NodeRed.start();
    token = `tok-reconcile-${uid()}`;
    const z = uid('tab');
    await red.deploy([
      messagingEnvironment('envReconcile', token, fake, red),
      tab(z, 'Reconcile'),
      ...chain(z, [
        ['telco-sms-start', 'kStart', { environment: 'envReconcile' }],
        ['output-task', 'kGot', { text: 'Got {message.text}' }],
        ['input-task', 'kNext', { prompt: 'Next?', resultVariable: 'next' }],
        ['output-task', 'kBye', { text: 'Bye {next}' }],
        ['end-task', 'kEnd'],
      ]),
    ]);
  });
  after(async function () {
    await red?.close();
    await fake?.close();
  });

  const bodies = (user: string) => fake.messagesTo(user).map((m) => String(m.Body));
  const mayRepeat = () => red.logs.filter((line) => /may be a duplicate/.test(line));

  /** The person writes; the reply's request reaches the provider, which never answers (made or not); Node-RED dies and comes back. */
  async function crashWhileReplying(user: string, fault: SendFault = { madeThenHeld: true }): Promise<void> {
    fake.inject(user, fault);
    const res = await postInbound(red, token, inboundForm(user, OURS, 'hi'));
    should(res.status).equal(200);
    await eventually(() => fake.attemptsTo(user).length === 1, 15000, "the reply's request at the provider");
    await red.kill();
    await red.relaunch();
    await eventually(() => bodies(user).includes('Next?'), 20000, 'the next prompt after the restart');
  }

  it('finds the reply in the Messages list after the restart: it is not sent again, and the next prompt follows once', async function () {
    const user = '+15557000001';
    const listedBefore = fake.listRequests().length;
    await crashWhileReplying(user);
    should(bodies(user)).eql(['Got hi', 'Next?']);
    should(fake.listRequests().length).above(listedBefore, 'the list was read');
    should(mayRepeat()).eql([]);
    await postInbound(red, token, inboundForm(user, OURS, 'fine'));
    await eventually(() => bodies(user).includes('Bye fine'), 15000, 'the last reply');
    should(bodies(user)).eql(['Got hi', 'Next?', 'Bye fine']);
  });

  it('sends the reply again when the list cannot be read, with one warning that it may be a duplicate', async function () {
    const user = '+15557000002';
    const warnedBefore = mayRepeat().length;
    // Each read of the list fails, its retries too.
    fake.injectList({ status: 500 }, { status: 500 }, { status: 500 });
    await crashWhileReplying(user);
    should(bodies(user)).eql(['Got hi', 'Got hi', 'Next?']);
    const warned = mayRepeat().slice(warnedBefore);
    should(warned).have.length(1);
    should(warned[0]).not.containEql(AUTH_TOKEN);
  });

  it('sends the reply once after the restart when the provider had not made it: not found, no warning', async function () {
    const user = '+15557000003';
    const warnedBefore = mayRepeat().length;
    await crashWhileReplying(user, { neverAnswered: true });
    should(bodies(user)).eql(['Got hi', 'Next?']);
    should(fake.attemptsTo(user)).have.length(3);
    should(mayRepeat().slice(warnedBefore)).eql([]);
  });
});
