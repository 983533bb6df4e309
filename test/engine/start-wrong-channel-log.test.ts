import 'should';
import { chain, tab, uid } from '../harness/flows';
import { NodeRed, eventually } from '../harness/node-red';
import { startWithLoopback } from '../harness/loopback';
import { FakeTwilioMessagingApi } from '../fakes/twilio-messaging-api';
import { ACCOUNT_SID, AUTH_TOKEN, inboundForm, messagingEnvironment, postInbound, sessionWhen } from '../fakes/twilio-messaging-webhooks';
import { FakeTwilioCall } from '../fakes/twilio-voice-caller';
import { sessionOfCall, voiceEnvironment } from '../harness/voice-flows';

// Node-RED's own comms client library (a dependency of the runtime under test).

const WebSocket = require('ws');

/** What the editor's Debug sidebar shows for a node's error: Node-RED encodes an Error as `name: message`. */
function shown(data: { msg: string; format?: string }): string {
  if (data.format !== 'error') return data.msg;
  const error = JSON.parse(data.msg).data;
  return `${error.name}: ${error.message}`;
}

/**
 * A start refused on the wrong Channel (8025) shows its code and name like every other error
 * line: in the Node-RED log and in the editor's Debug sidebar.
 */
describe('8025 StartWrongChannel in the log and the Debug sidebar', function () {
  let red: NodeRed;
  let fake: FakeTwilioMessagingApi;
  let ws: any;
  const sidebar: Array<{ id: string; msg: string; format?: string }> = [];
  const token = 'tok-8025-' + uid();
  const taskToken = 'tok-3005-' + uid();
  const voice = voiceEnvironment('v8025');

  before(async function () {
    fake = await FakeTwilioMessagingApi.start(ACCOUNT_SID, AUTH_TOKEN);
    red = await startWithLoopback();
    await red.deploy([
      messagingEnvironment('env8025', token, fake, red),
      messagingEnvironment('env3005', taskToken, fake, red),
      tab('p3005', 'Empty output'),
      ...chain('p3005', [
        ['telco-sms-start', 'smsEmpty', { environment: 'env3005' }],
        ['output-task', 'emptyOut', { text: '' }],
        ['end-task', 'emptyEnd'],
      ]),
      voice,
      tab('p8025', 'Only messenger'),
      ...chain('p8025', [
        ['telco-messenger-start', 'waOnly', { environment: 'env8025' }],
        ['output-task', 'waSay', { text: 'never' }],
        ['end-task', 'waEnd'],
      ]),
      // A voice Environment whose Process has only another Channel's start (the test Loopback Channel's).
      tab('pv8025', 'Voice bound to a Loopback start'),
      ...chain('pv8025', [
        ['loopback-start', 'loopForVoice', { environment: 'v8025' }],
        ['output-task', 'vSay', { text: 'never' }],
        ['end-task', 'vEnd'],
      ]),
    ]);
    ws = new WebSocket(red.url('/comms').replace('http', 'ws'));
    await new Promise((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    ws.on('message', (raw: Buffer) => {
      for (const m of JSON.parse(raw.toString())) if (m.topic === 'debug') sidebar.push(m.data);
    });
    ws.send(JSON.stringify({ subscribe: 'debug' }));
    await new Promise((r) => setTimeout(r, 100));
  });
  after(async function () {
    ws?.close();
    await red?.close();
    await fake?.close();
  });

  it('an SMS reaching a Process with only a messenger start: "8025 StartWrongChannel: ..." in the log', async function () {
    const user = '+15558025001';
    const mark = red.logs.length;
    (await postInbound(red, token, inboundForm(user, '+15550001000', 'hi'))).status.should.equal(200);
    const ended = await sessionWhen(red, 'env8025', user, '+15550001000', (s) => s.state === 'ended', 'the Session to end');
    ended.error.code.should.equal(8025);
    const line = await red.waitForLog(/\[telco-messenger-start:waOnly\]/);
    line.should.match(
      /\[error\] \[telco-messenger-start:waOnly\] 8025 StartWrongChannel: This start serves TelcoMessagingMessenger; the Session came on TelcoMessagingSms and ends/,
    );
    red.logs
      .slice(mark)
      .filter((l) => /TaskError/.test(l))
      .should.eql([]);
    const debug = await eventually(() => sidebar.find((d) => d.id === 'waOnly'), 5000, 'the Debug sidebar line');
    shown(debug).should.equal('8025 StartWrongChannel: This start serves TelcoMessagingMessenger; the Session came on TelcoMessagingSms and ends');
    fake.messagesTo(user).should.have.length(0);
  });

  it("a call reaching a Process whose only start is another Channel's: the same form", async function () {
    const call = new FakeTwilioCall(red);
    const answer = await call.start(voice.token);
    answer.status.should.equal(200);
    (await sessionOfCall(red, call.callSid)).error.code.should.equal(8025);
    const line = await red.waitForLog(/\[loopback-start:loopForVoice\]/);
    line.should.match(/\[error\] \[loopback-start:loopForVoice\] 8025 StartWrongChannel: This start serves Loopback; the Session came on TelcoVoice and ends/);
    const debug = await eventually(() => sidebar.find((d) => d.id === 'loopForVoice'), 5000, 'the Debug sidebar line');
    shown(debug).should.equal('8025 StartWrongChannel: This start serves Loopback; the Session came on TelcoVoice and ends');
  });

  it('a Task error with no error branch (neighbour): the same form', async function () {
    const user = '+15558025002';
    (await postInbound(red, taskToken, inboundForm(user, '+15550001000', 'hi'))).status.should.equal(200);
    const ended = await sessionWhen(red, 'env3005', user, '+15550001000', (s) => s.state === 'ended', 'the Session to end');
    ended.error.code.should.equal(3005);
    (await red.waitForLog(/\[output-task:emptyOut\]/)).should.match(/\[error\] \[output-task:emptyOut\] 3005 TaskInvalidData: /);
    const debug = await eventually(() => sidebar.find((d) => d.id === 'emptyOut'), 5000, 'the Debug sidebar line');
    shown(debug).should.equal('3005 TaskInvalidData: The OutputTask has neither text nor files to send');
  });
});
