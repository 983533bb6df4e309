import should from 'should';
import { node, tab, uid } from '../harness/flows';
import { NodeRed, eventually } from '../harness/node-red';
import { FakeTwilioMessagingApi } from '../fakes/twilio-messaging-api';
import { ACCOUNT_SID, AUTH_TOKEN, inboundForm, messageSid, messagingEnvironment, postInbound, sessionWhen } from '../fakes/twilio-messaging-webhooks';

const OURS = '+15550001000';
const WA_OURS = 'whatsapp:+14155238886';
const PDF = Buffer.from('%PDF-1.4 shared start');

/**
 * SPEC 4.4 rule 5: a Process whose start is the shared `session-start` still works on SMS and
 * WhatsApp: the first message answers the first InputTask, and there is no `{message}`.
 */
describe('messaging with the shared Start', function () {
  let red: NodeRed;
  let fake: FakeTwilioMessagingApi;
  const token = 'tok-shared-' + uid();
  const filesToken = 'tok-shared-f-' + uid();
  const buttonsToken = 'tok-shared-b-' + uid();

  before(async function () {
    fake = await FakeTwilioMessagingApi.start(ACCOUNT_SID, AUTH_TOKEN);
    red = await NodeRed.start();
    await red.deploy([
      messagingEnvironment('envShared', token, fake, red),
      messagingEnvironment('envSharedF', filesToken, fake, red),
      messagingEnvironment('envSharedB', buttonsToken, fake, red),
      tab('pShared', 'Shared start'),
      node('session-start', 'shStart', 'pShared', { messaging: 'envShared' }, [['shWelcome']]),
      node('output-task', 'shWelcome', 'pShared', { text: 'Welcome' }, [['shName'], []]),
      node('input-task', 'shName', 'pShared', { prompt: 'Your name?', resultVariable: 'name' }, [['shHi'], []]),
      node('output-task', 'shHi', 'pShared', { text: 'Hi {name} ({message.text})' }, [['shMore'], []]),
      node('input-task', 'shMore', 'pShared', { prompt: 'Anything else?', resultVariable: 'more' }, [['shNoted'], []]),
      node('output-task', 'shNoted', 'pShared', { text: 'Noted {more}' }, [['shEnd'], []]),
      node('end-task', 'shEnd', 'pShared', {}),
      tab('pSharedF', 'Shared start, files'),
      node('session-start', 'sfStart', 'pSharedF', { messaging: 'envSharedF' }, [['sfIn']]),
      node('input-task', 'sfIn', 'pSharedF', { prompt: 'Send it', resultVariable: 'r', filesVariable: 'docs' }, [['sfOut'], []]),
      node('output-task', 'sfOut', 'pSharedF', { text: 'Got "{r}" with {docs.count}: {docs.names}' }, [['sfEnd'], []]),
      node('end-task', 'sfEnd', 'pSharedF', {}),
      tab('pSharedB', 'Shared start, buttons first'),
      node('session-start', 'sbStart', 'pSharedB', { messaging: 'envSharedB' }, [['sbButtons']]),
      node('telco-messenger-buttons', 'sbButtons', 'pSharedB', { contentSid: 'HX' + 'b'.repeat(32), resultVariable: 'choice' }, [['sbAsk'], []]),
      node('input-task', 'sbAsk', 'pSharedB', { prompt: 'Why {choice.payload}?', resultVariable: 'why' }, [['sbEnd'], []]),
      node('end-task', 'sbEnd', 'pSharedB', {}),
    ]);
  });
  after(async function () {
    await red?.close();
    await fake?.close();
  });

  it('SMS: the first message answers the first InputTask (its prompt is not sent); no {message}', async function () {
    const user = '+15551260001';
    (await postInbound(red, token, inboundForm(user, OURS, 'Ann'))).status.should.equal(200);
    const waiting = await sessionWhen(red, 'envShared', user, OURS, (s) => s.waitingAt?.nodeId === 'shMore', 'the second InputTask');
    waiting.vars.name.should.equal('Ann');
    should(waiting.vars.message).be.undefined();
    waiting.vars.execution.should.containEql({ channel: 'TelcoMessagingSms', channelSender: user, channelRecipient: OURS });
    await eventually(() => fake.messagesTo(user).length === 3, 5000, 'three messages');
    fake
      .messagesTo(user)
      .map((m) => m.Body)
      .should.eql(['Welcome', 'Hi Ann ()', 'Anything else?']);
    waiting.history
      .filter((h: any) => h.from === 'user')
      .map((h: any) => h.text)
      .should.eql(['Ann'], 'the opening is in the history once');
    await postInbound(red, token, inboundForm(user, OURS, 'nothing'));
    const done = await sessionWhen(red, 'envShared', user, OURS, (s) => s.state === 'completed', 'the second answer');
    done.vars.more.should.equal('nothing');
    fake.messagesTo(user).at(-1)!.Body.should.equal('Noted nothing');
  });

  it('WhatsApp: the same, and a location as the first message answers with its {<variable>_location}', async function () {
    const user = 'whatsapp:+447700900501';
    await postInbound(red, token, inboundForm(user, WA_OURS, '', { MessageType: 'location', Latitude: '51.5007', Longitude: '-0.1246', Label: 'Big Ben' }));
    const waiting = await sessionWhen(red, 'envShared', user, WA_OURS, (s) => s.waitingAt?.nodeId === 'shMore', 'the second InputTask');
    waiting.channel.should.equal('TelcoMessagingMessenger');
    waiting.vars.name.should.equal('Big Ben');
    waiting.vars.name_location.should.eql({ latitude: 51.5007, longitude: -0.1246, address: '', label: 'Big Ben' });
    should(waiting.vars.message).be.undefined();
  });

  it("the files of the first message go to the first InputTask's Store files in", async function () {
    const user = '+15551260002';
    const sid = messageSid('MM');
    const form = inboundForm(user, OURS, 'my invoice', {
      MessageSid: sid,
      NumMedia: '1',
      MediaUrl0: fake.addMedia(sid, `ME${uid()}`.padEnd(34, '0'), { data: PDF, type: 'application/pdf' }),
      MediaContentType0: 'application/pdf',
    });
    await postInbound(red, filesToken, form);
    const done = await sessionWhen(red, 'envSharedF', user, OURS, (s) => s.state === 'completed', 'the Session');
    done.vars.r.should.equal('my invoice');
    done.vars.docs.count.should.equal(1);
    fake
      .messagesTo(user)
      .map((m) => m.Body)
      .should.eql(['Got "my invoice" with 1: file-1.pdf']);
  });

  it('when the Session first waits at another step (buttons), the first message answers nothing', async function () {
    const user = 'whatsapp:+447700900502';
    await postInbound(red, buttonsToken, inboundForm(user, WA_OURS, 'hello'));
    await sessionWhen(red, 'envSharedB', user, WA_OURS, (s) => s.waitingAt?.nodeId === 'sbButtons', 'the buttons');
    await postInbound(red, buttonsToken, inboundForm(user, WA_OURS, 'Yes', { ButtonPayload: 'yes', ButtonText: 'Yes', MessageType: 'button' }));
    const asking = await sessionWhen(red, 'envSharedB', user, WA_OURS, (s) => s.waitingAt?.nodeId === 'sbAsk', 'the InputTask after the buttons');
    should(asking.vars.why).be.undefined();
    await eventually(() => fake.messagesTo(user).some((m) => m.Body === 'Why yes?'), 5000, 'its prompt');
  });
});
