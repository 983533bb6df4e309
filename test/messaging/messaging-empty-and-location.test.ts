import should from 'should';
import { chain, node, tab, uid } from '../harness/flows';
import { NodeRed, eventually } from '../harness/node-red';
import { FakeTwilioMessagingApi } from '../fakes/twilio-messaging-api';
import { ACCOUNT_SID, AUTH_TOKEN, inboundForm, messagingEnvironment, postInbound, sessionWhen } from '../fakes/twilio-messaging-webhooks';

const OURS = '+15550001000';
const WA_OURS = 'whatsapp:+14155238886';
const CONTENT_SID = 'HX' + 'a'.repeat(32);

/** A WhatsApp location pin as Twilio posts it: no Body, Latitude/Longitude, maybe Address and Label. */
function locationForm(user: string, fields: Record<string, string>): Record<string, string> {
  return inboundForm(user, WA_OURS, '', { MessageType: 'location', ProfileName: 'Ann', WaId: user.replace(/\D/g, ''), ...fields });
}

/**
 * Messages a waiting step cannot read as text or files (4009), and WhatsApp location pins,
 * which are answers (`<variable>_location`).
 */
describe('messaging: empty messages and shared locations', function () {
  let red: NodeRed;
  let fake: FakeTwilioMessagingApi;
  const token = 'tok-empty-' + uid();
  const buttonsToken = 'tok-empty-b-' + uid();
  const bareToken = 'tok-empty-c-' + uid();

  before(async function () {
    fake = await FakeTwilioMessagingApi.start(ACCOUNT_SID, AUTH_TOKEN);
    red = await NodeRed.start();
    await red.deploy([
      messagingEnvironment('envEmpty', token, fake, red),
      messagingEnvironment('envEmptyB', buttonsToken, fake, red),
      messagingEnvironment('envEmptyC', bareToken, fake, red),
      tab('pEmpty', 'Empty and location'),
      // SMS: the InputTask's error branch answers and asks again.
      node('telco-sms-start', 'sStart', 'pEmpty', { environment: 'envEmpty' }, [['sAsk']]),
      node('input-task', 'sAsk', 'pEmpty', { prompt: 'Your name?', resultVariable: 'name' }, [['sThanks'], ['sSorry']]),
      node('output-task', 'sSorry', 'pEmpty', { text: 'Sorry, {error.code} {error.name}' }, [['sAsk'], []]),
      node('output-task', 'sThanks', 'pEmpty', { text: 'Thanks {name}' }, [['sEnd'], []]),
      node('end-task', 'sEnd', 'pEmpty', {}),
      // Messenger: the opening, then two InputTasks storing into the same variable.
      node('telco-messenger-start', 'wStart', 'pEmpty', { environment: 'envEmpty' }, [['wOpen']]),
      node('output-task', 'wOpen', 'pEmpty', { text: 'Opened with "{message.text}" at {message.location.latitude},{message.location.longitude}' }, [
        ['wWhere'],
        [],
      ]),
      node('input-task', 'wWhere', 'pEmpty', { prompt: 'Where are you?', resultVariable: 'place' }, [['wAt'], ['wSorry']]),
      node('output-task', 'wSorry', 'pEmpty', { text: 'Sorry, {error.code}' }, [['wWhere'], []]),
      node(
        'output-task',
        'wAt',
        'pEmpty',
        { text: 'At {place} ({place_location.latitude}, {place_location.longitude}; {place_location.address}; {place_location.label})' },
        [['wAgain'], []],
      ),
      node('input-task', 'wAgain', 'pEmpty', { prompt: 'And now?', resultVariable: 'place' }, [['wEnd'], []]),
      node('end-task', 'wEnd', 'pEmpty', {}),
      tab('pEmptyB', 'Buttons'),
      node('telco-messenger-start', 'bStart', 'pEmptyB', { environment: 'envEmptyB' }, [['bButtons']]),
      node('telco-messenger-buttons', 'bButtons', 'pEmptyB', { contentSid: CONTENT_SID, resultVariable: 'choice' }, [['bEnd'], ['bSorry']]),
      node('output-task', 'bSorry', 'pEmptyB', { text: 'Buttons: {error.code}' }, [['bEnd'], []]),
      node('end-task', 'bEnd', 'pEmptyB', {}),
      tab('pEmptyC', 'No error branch'),
      ...chain('pEmptyC', [
        ['telco-sms-start', 'cStart', { environment: 'envEmptyC' }],
        ['input-task', 'cAsk', { prompt: 'Say something', resultVariable: 'x' }],
        ['end-task', 'cEnd'],
      ]),
    ]);
  });
  after(async function () {
    await red?.close();
    await fake?.close();
  });

  it('SMS: an empty message at a waiting InputTask takes its error branch with 4009; the next text answers', async function () {
    const user = '+15551250001';
    await postInbound(red, token, inboundForm(user, OURS, 'hi'));
    await sessionWhen(red, 'envEmpty', user, OURS, (s) => s.waitingAt?.nodeId === 'sAsk', 'the first prompt');
    (await postInbound(red, token, inboundForm(user, OURS, ''))).status.should.equal(200);
    await eventually(() => fake.messagesTo(user).length === 3, 5000, 'the error branch and the prompt again');
    fake
      .messagesTo(user)
      .map((m) => m.Body)
      .should.eql(['Your name?', 'Sorry, 4009 ModuleInputEmpty', 'Your name?']);
    const waiting = await sessionWhen(
      red,
      'envEmpty',
      user,
      OURS,
      (s) => s.waitingAt?.nodeId === 'sAsk' && s.log.some((e: any) => e.code === 4009),
      'the Session to wait again',
    );
    waiting.log.find((e: any) => e.code === 4009).message.should.match(/has neither text nor files/);
    should(waiting.vars.name).be.undefined();
    await postInbound(red, token, inboundForm(user, OURS, 'Ann'));
    const done = await sessionWhen(red, 'envEmpty', user, OURS, (s) => s.state === 'completed', 'the answer');
    done.vars.name.should.equal('Ann');
    fake.messagesTo(user).at(-1)!.Body.should.equal('Thanks Ann');
  });

  it('WhatsApp: a message type the module does not read (no Body, no media) is 4009 at the waiting InputTask', async function () {
    const user = 'whatsapp:+447700900401';
    await postInbound(red, token, locationForm(user, { Latitude: '1', Longitude: '2' }));
    await sessionWhen(red, 'envEmpty', user, WA_OURS, (s) => s.waitingAt?.nodeId === 'wWhere', 'the prompt');
    await postInbound(red, token, inboundForm(user, WA_OURS, '', { MessageType: 'unsupported' }));
    await eventually(() => fake.messagesTo(user).some((m) => m.Body === 'Sorry, 4009'), 5000, 'the error branch');
    const waiting = await sessionWhen(
      red,
      'envEmpty',
      user,
      WA_OURS,
      (s) => s.waitingAt?.nodeId === 'wWhere' && s.log.some((e: any) => e.code === 4009),
      'the Session',
    );
    waiting.log.find((e: any) => e.code === 4009).message.should.match(/\(unsupported\) has neither text nor files/);
  });

  it('a location pin opens a Session: {message.text} is its label, {message.location} its fields', async function () {
    const user = 'whatsapp:+447700900402';
    await postInbound(
      red,
      token,
      locationForm(user, { Latitude: '52.520008', Longitude: '13.404954', Address: 'Pariser Platz, Berlin', Label: 'Brandenburg Gate' }),
    );
    const session = await sessionWhen(red, 'envEmpty', user, WA_OURS, (s) => s.waitingAt?.nodeId === 'wWhere', 'the Session');
    session.vars.message.text.should.equal('Brandenburg Gate');
    session.vars.message.location.should.eql({ latitude: 52.520008, longitude: 13.404954, address: 'Pariser Platz, Berlin', label: 'Brandenburg Gate' });
    fake.messagesTo(user)[0].Body.should.equal('Opened with "Brandenburg Gate" at 52.520008,13.404954');
  });

  it('a location pin answers an InputTask: the label or address, else "latitude,longitude"; {<variable>_location} its fields', async function () {
    const user = 'whatsapp:+447700900403';
    await postInbound(red, token, inboundForm(user, WA_OURS, 'hello'));
    await sessionWhen(red, 'envEmpty', user, WA_OURS, (s) => s.waitingAt?.nodeId === 'wWhere', 'the prompt');
    await postInbound(red, token, locationForm(user, { Latitude: '-33.8568', Longitude: '151.2153', Address: 'Bennelong Point, Sydney' }));
    const again = await sessionWhen(red, 'envEmpty', user, WA_OURS, (s) => s.waitingAt?.nodeId === 'wAgain', 'the location answer');
    again.vars.place.should.equal('Bennelong Point, Sydney');
    again.vars.place_location.should.eql({ latitude: -33.8568, longitude: 151.2153, address: 'Bennelong Point, Sydney', label: '' });
    fake
      .messagesTo(user)
      .map((m) => m.Body)
      .should.containEql('At Bennelong Point, Sydney (-33.8568, 151.2153; Bennelong Point, Sydney; )');
    // A text answer to the next InputTask of the same variable leaves no stale location behind.
    await postInbound(red, token, inboundForm(user, WA_OURS, 'home now'));
    const done = await sessionWhen(red, 'envEmpty', user, WA_OURS, (s) => s.state === 'completed', 'the text answer');
    done.vars.place.should.equal('home now');
    should(done.vars.place_location).be.undefined();
  });

  it('a bare pin (no address, no label) answers "latitude,longitude"', async function () {
    const user = 'whatsapp:+447700900404';
    await postInbound(red, token, inboundForm(user, WA_OURS, 'hello'));
    await sessionWhen(red, 'envEmpty', user, WA_OURS, (s) => s.waitingAt?.nodeId === 'wWhere', 'the prompt');
    await postInbound(red, token, locationForm(user, { Latitude: '48.8584', Longitude: '2.2945' }));
    const again = await sessionWhen(red, 'envEmpty', user, WA_OURS, (s) => s.waitingAt?.nodeId === 'wAgain', 'the answer');
    again.vars.place.should.equal('48.8584,2.2945');
    again.vars.place_location.should.eql({ latitude: 48.8584, longitude: 2.2945, address: '', label: '' });
  });

  it('the buttons step takes its error branch with 4009 too', async function () {
    const user = 'whatsapp:+447700900405';
    await postInbound(red, buttonsToken, inboundForm(user, WA_OURS, 'hi'));
    await sessionWhen(red, 'envEmptyB', user, WA_OURS, (s) => s.waitingAt?.nodeId === 'bButtons', 'the buttons');
    await postInbound(red, buttonsToken, inboundForm(user, WA_OURS, '', { MessageType: 'sticker' }));
    const done = await sessionWhen(red, 'envEmptyB', user, WA_OURS, (s) => s.state === 'completed', 'the error branch');
    should(done.vars.choice).be.undefined();
    fake.messagesTo(user).at(-1)!.Body.should.equal('Buttons: 4009');
  });

  it('with no error branch the Session ends with 4009, and the log says why', async function () {
    const user = '+15551250002';
    await postInbound(red, bareToken, inboundForm(user, OURS, 'hi'));
    await sessionWhen(red, 'envEmptyC', user, OURS, (s) => s.waitingAt?.nodeId === 'cAsk', 'the prompt');
    await postInbound(red, bareToken, inboundForm(user, OURS, '   '));
    const ended = await sessionWhen(red, 'envEmptyC', user, OURS, (s) => s.state === 'ended', 'the Session to end');
    ended.error.code.should.equal(4009);
    (await red.waitForLog(/\[input-task:cAsk\] 4009 ModuleInputEmpty: The message \w+ from \+15551250002 has neither text nor files/)).should.be.ok();
  });

  it('with no live Session an empty message starts nothing (logged)', async function () {
    const user = '+15551250003';
    const form = inboundForm(user, OURS, '');
    (await postInbound(red, token, form)).status.should.equal(200);
    await red.waitForLog(new RegExp(`4009 ModuleInputEmpty: message ${form.MessageSid} from \\${user} has neither text nor files; nothing started`));
    fake.messagesTo(user).should.have.length(0);
  });
});
