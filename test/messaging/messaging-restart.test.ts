import should from 'should';
import { chain, tab, uid } from '../harness/flows';
import { NodeRed } from '../harness/node-red';
import { FakeTwilioMessagingApi } from '../fakes/twilio-messaging-api';
import { ACCOUNT_SID, AUTH_TOKEN, inboundForm, messagingEnvironment, postInbound, sessionWhen } from '../fakes/twilio-messaging-webhooks';

/** A waiting messaging Session survives a Node-RED restart: the reply continues it from the same number. */
describe('messaging across a restart', function () {
  let red: NodeRed;
  let fake: FakeTwilioMessagingApi;
  const token = 'tok-restart-' + uid();

  before(async function () {
    fake = await FakeTwilioMessagingApi.start(ACCOUNT_SID, AUTH_TOKEN);
    red = await NodeRed.start({ settings: { contextStorage: { default: { module: 'localfilesystem', config: { flushInterval: 0 } } } } });
    const z = uid('tab');
    await red.deploy([
      messagingEnvironment('envR', token, fake, red),
      tab(z, 'Restart'),
      ...chain(z, [
        ['telco-messenger-start', 'rStart', { environment: 'envR' }],
        ['input-task', 'rIn', { prompt: 'Your city?', resultVariable: 'city' }],
        ['output-task', 'rOut', { text: '{message.text} from {city}' }],
        ['end-task', 'rEnd'],
      ]),
    ]);
  });
  after(async function () {
    await red?.close();
    await fake?.close();
  });

  it('continues the waiting Session after the restart and replies from the number written to', async function () {
    const user = 'whatsapp:+447700900501';
    const ours = 'whatsapp:+14155238886';
    await postInbound(red, token, inboundForm(user, ours, 'hi', { ProfileName: 'Ann' }));
    const waiting = await sessionWhen(red, 'envR', user, ours, (s) => s.waitingAt?.nodeId === 'rIn', 'the wait');
    await red.restart();
    await postInbound(red, token, inboundForm(user, ours, 'Lisbon'));
    const done = await sessionWhen(red, 'envR', user, ours, (s) => s.state === 'completed', 'the reply after the restart');
    should(done.id).equal(waiting.id);
    should(fake.messagesTo(user).map((m) => [m.From, m.Body])).eql([
      [ours, 'Your city?'],
      [ours, 'hi from Lisbon'],
    ]);
  });
});
