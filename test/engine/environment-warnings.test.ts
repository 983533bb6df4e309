import should from 'should';
import { watchStatuses } from '../harness/comms';
import { node, tab } from '../harness/flows';
import { NodeRed, eventually } from '../harness/node-red';

/** Every kind of Environment says the same thing the same way in the deploy log. */
describe('Environment warnings at deploy', function () {
  let red: NodeRed;
  before(async function () {
    red = await NodeRed.start();
  });
  after(async function () {
    await red?.close();
  });

  it('word "no token" and "signatures off" alike for Slack, voice and messaging', async function () {
    const mark = red.logs.length;
    await red.deploy([
      { id: 'ewSlack', type: 'teamchat-environment', name: 'Slack', credentials: { botToken: 'xoxb-1', signingSecret: 's' } },
      {
        id: 'ewVoice',
        type: 'telco-voice-environment',
        name: 'Voice',
        validateSignatures: false,
        credentials: { accountSid: 'AC' + '0'.repeat(32), authToken: 't' },
      },
      {
        id: 'ewText',
        type: 'telco-messaging-environment',
        name: 'Texts',
        validateSignatures: false,
        credentials: { accountSid: 'AC' + '0'.repeat(32), authToken: 't' },
      },
    ]);
    await red.waitForLog(/\[telco-messaging-environment:Texts\] Validate Signatures is off/);
    const warnings = red.logs
      .slice(mark)
      .filter((l) => /\[warn\] \[(teamchat|telco-voice|telco-messaging)-environment:/.test(l))
      .map((l) => l.replace(/^.*?\[warn\] \[[^\]]+\] /, ''));
    const noToken = warnings.filter((w) => /token/i.test(w) && !/Bot Token/.test(w));
    const signaturesOff = warnings.filter((w) => /signature/i.test(w));
    should(noToken.length).equal(3, warnings.join('\n'));
    should(new Set(noToken).size).equal(1, noToken.join('\n'));
    should(noToken[0]).match(/^No token: open this Environment in the editor and deploy again/);
    should(signaturesOff.length).equal(2, warnings.join('\n'));
    should(new Set(signaturesOff).size).equal(1, signaturesOff.join('\n'));
  });

  it('warn once each, one way, when an Environment lacks credentials, and their starts say so in yellow', async function () {
    const statuses = await watchStatuses(red);
    const mark = red.logs.length;
    const token = (n: number) => `ewMissingToken000000000${n}`;
    await red.deploy([
      { id: 'mwSlack', type: 'teamchat-environment', name: 'Bare Slack', credentials: { token: token(1) } },
      {
        id: 'mwSocket',
        type: 'teamchat-environment',
        name: 'Bare socket',
        socketMode: true,
        credentials: { botToken: 'xoxb-1', token: token(2) },
      },
      { id: 'mwVoice', type: 'telco-voice-environment', name: 'Bare voice', credentials: { token: token(3) } },
      { id: 'mwText', type: 'telco-messaging-environment', name: 'Bare texts', credentials: { accountSid: 'AC' + '0'.repeat(32), token: token(4) } },
      tab('mwTab', 'Missing'),
      node('teamchat-start', 'mwSlackStart', 'mwTab', { environment: 'mwSlack' }, [[]]),
      node('teamchat-start', 'mwSocketStart', 'mwTab', { environment: 'mwSocket' }, [[]]),
      node('telco-call-start', 'mwVoiceStart', 'mwTab', { environment: 'mwVoice' }, [[]]),
      node('telco-sms-start', 'mwTextStart', 'mwTab', { environment: 'mwText' }, [[]]),
    ]);
    await red.waitForLog(/\[telco-messaging-environment:Bare texts\] Missing/);
    const missing = red.logs
      .slice(mark)
      .filter((l) => /\[warn\] \[[a-z-]+-environment:Bare [A-Za-z]+\] Missing/.test(l))
      .map((l) => l.replace(/^.*?\[warn\] /, ''));
    should(missing).eql([
      '[teamchat-environment:Bare Slack] Missing Bot Token and Signing Secret: Tasks that post to Slack stop with 4008; the Event URL refuses every request',
      '[teamchat-environment:Bare socket] Missing Signing Secret: the Start URL refuses every request',
      '[telco-voice-environment:Bare voice] Missing Account SID and Auth Token: calls are hung up (4008)',
      '[telco-messaging-environment:Bare texts] Missing Auth Token: messages cannot be sent (4008); inbound messages are refused (4020)',
    ]);
    const shown = (id: string, what: string) => eventually(() => statuses.get(id)?.text?.includes(what) && statuses.get(id), 5000, `${id} showing ${what}`);
    const slack = await shown('mwSlackStart', 'missing');
    should(slack).containEql({ fill: 'yellow', text: 'serves Bare Slack · missing Bot Token, Signing Secret' });
    should(await shown('mwVoiceStart', 'missing')).containEql({ fill: 'yellow', text: 'serves Bare voice · missing Account SID, Auth Token' });
    should(await shown('mwTextStart', 'missing')).containEql({ fill: 'yellow', text: 'serves Bare texts · missing Auth Token' });
    // Socket Mode's own note (refused: no App-Level Token, red) follows what is missing.
    const socket = await shown('mwSocketStart', 'Socket Mode refused');
    should(socket).containEql({ fill: 'red', text: 'serves Bare socket · missing Signing Secret · Socket Mode refused: no App-Level Token' });
    statuses.close();
  });

  it('warn when the Account SID is not one (an API key SID pasted in): voice and messaging alike, their starts say so, auto-deploy stops with 4008', async function () {
    const statuses = await watchStatuses(red);
    const mark = red.logs.length;
    const keySid = 'SK' + '0'.repeat(32);
    await red.deploy([
      {
        id: 'skVoice',
        type: 'telco-voice-environment',
        name: 'Key voice',
        autoDeploy: true,
        phoneNumberSid: 'PN' + '0'.repeat(32),
        publicBaseUrl: 'https://ivr.example.com',
        credentials: { accountSid: keySid, authToken: 't', token: 'skVoiceToken0000000000001' },
      },
      {
        id: 'skText',
        type: 'telco-messaging-environment',
        name: 'Key texts',
        credentials: { accountSid: keySid, authToken: 't', token: 'skTextToken00000000000001' },
      },
      tab('skTab', 'Key SID'),
      node('telco-call-start', 'skVoiceStart', 'skTab', { environment: 'skVoice' }, [[]]),
      node('telco-sms-start', 'skTextStart', 'skTab', { environment: 'skText' }, [[]]),
    ]);
    await red.waitForLog(/\[telco-messaging-environment:Key texts\] The Account SID/);
    const lines = red.logs
      .slice(mark)
      .filter((l) => /\[(warn|error)\] \[[a-z-]+-environment:Key [a-z]+\] (The Account SID|4008)/.test(l))
      .map((l) => l.replace(/^.*?\[(warn|error)\] /, '[$1] '));
    const copy = 'Copy the Account SID (AC…) from the Twilio Console; an API key SID (SK…) is not one';
    should(lines).eql([
      `[warn] [telco-voice-environment:Key voice] The Account SID begins with SK, not AC: Call out and auto-deploy stop with 4008. ${copy}`,
      '[error] [telco-voice-environment:Key voice] 4008 ModuleMissingConfiguration: auto-deploy not done: The Account SID of the voice Environment "Key voice" must begin with AC, not "SK"; an API key SID (SK…) is not an Account SID',
      `[warn] [telco-messaging-environment:Key texts] The Account SID begins with SK, not AC: messages cannot be sent (4008). ${copy}`,
    ]);
    const shown = (id: string, what: string) => eventually(() => statuses.get(id)?.text?.includes(what) && statuses.get(id), 5000, `${id} showing ${what}`);
    should(await shown('skVoiceStart', 'auto-deploy')).containEql({
      fill: 'red',
      text: 'serves Key voice · unusable Account SID · auto-deploy: 4008 unusable settings',
    });
    should(await shown('skTextStart', 'unusable')).containEql({ fill: 'yellow', text: 'serves Key texts · unusable Account SID' });
    statuses.close();
  });

  it('log each inbound URL one way: "<what> URL: <url>", with a hint when there is no public base URL', async function () {
    const mark = red.logs.length;
    await red.deploy([
      {
        id: 'uwSlack',
        type: 'teamchat-environment',
        name: 'Url Slack',
        credentials: { botToken: 'xoxb-1', signingSecret: 's', token: 'uwSlackToken0000000000001' },
      },
      {
        id: 'uwVoice',
        type: 'telco-voice-environment',
        name: 'Url voice',
        publicBaseUrl: 'https://ivr.example.com',
        credentials: { accountSid: 'AC' + '0'.repeat(32), authToken: 't', token: 'uwVoiceToken0000000000001' },
      },
      {
        id: 'uwText',
        type: 'telco-messaging-environment',
        name: 'Url texts',
        credentials: { accountSid: 'AC' + '0'.repeat(32), authToken: 't', token: 'uwTextToken00000000000001' },
      },
    ]);
    await red.waitForLog(/\[telco-messaging-environment:Url texts\] Inbound URL/);
    const lines = red.logs
      .slice(mark)
      .filter((l) => /\[info\] \[[a-z-]+-environment:Url [A-Za-z]+\] /.test(l))
      .map((l) => l.replace(/^.*?\[info\] \[[^\]]+\] /, ''));
    const hint = ' (set the Public base URL for the full address)';
    should(lines).eql([
      `Event URL: /TeamChat/event/uwSlackToken0000000000001${hint}`,
      `Interactivity URL: /TeamChat/interact/uwSlackToken0000000000001${hint}`,
      `Start URL: /TeamChat/start/uwSlackToken0000000000001${hint}`,
      'Start URL: https://ivr.example.com/api/TelcoModule/Voice/start/uwVoiceToken0000000000001',
      `Inbound URL: /api/TelcoModule/Messaging/inbound/uwTextToken00000000000001${hint}`,
    ]);
  });
});
