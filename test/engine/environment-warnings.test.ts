import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import should from 'should';
import { watchStatuses } from '../harness/comms';
import { node, tab } from '../harness/flows';
import { NodeRed, REPO_ROOT, eventually } from '../harness/node-red';

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
    await red.waitForLog(/\[telco-messaging-environment:Bare texts\] SMS start/);
    const missing = red.logs
      .slice(mark)
      .filter((l) => /\[warn\] \[[a-z-]+-environment:Bare [A-Za-z]+\] (Tasks that post|The Start URL|Call start|SMS start)/.test(l))
      .map((l) => l.replace(/^.*?\[warn\] /, ''));
    should(missing).eql([
      "[teamchat-environment:Bare Slack] Tasks that post to Slack need the Bot Token (without it they stop with 4008); the Event URL needs the Signing Secret to take Slack's requests (until then it refuses every one); the Test chat plays it without them",
      '[teamchat-environment:Bare socket] The Start URL needs the Signing Secret to take requests (until then it refuses every one); the Test chat plays it without them',
      '[telco-voice-environment:Bare voice] Call start needs the Account SID and Auth Token to answer calls (without them calls are hung up, 4008); the Test chat plays it without them',
      '[telco-messaging-environment:Bare texts] SMS start needs the Auth Token to take messages and answer them; the Test chat plays it without them',
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

  it('warn when the API URL is not an http(s) URL with a host: Slack, voice and messaging alike, their starts say so, Socket Mode does not try', async function () {
    const statuses = await watchStatuses(red);
    const mark = red.logs.length;
    const twilio = { accountSid: 'AC' + '0'.repeat(32), authToken: 't' };
    await red.deploy([
      {
        id: 'auSlack',
        type: 'teamchat-environment',
        name: 'Url-less Slack',
        apiUrl: 'api.example.com',
        credentials: { botToken: 'xoxb-1', signingSecret: 's', token: 'auSlackToken000000000001' },
      },
      {
        id: 'auSocket',
        type: 'teamchat-environment',
        name: 'Url-less socket',
        apiUrl: 'localhost:3000',
        socketMode: true,
        credentials: { botToken: 'xoxb-1', signingSecret: 's', appToken: 'xapp-1', token: 'auSocketToken00000000001' },
      },
      {
        id: 'auVoice',
        type: 'telco-voice-environment',
        name: 'Url-less voice',
        apiUrl: 'localhost:3000',
        credentials: { ...twilio, token: 'auVoiceToken000000000001' },
      },
      {
        id: 'auText',
        type: 'telco-messaging-environment',
        name: 'Url-less texts',
        apiUrl: 'ftp://example.com',
        credentials: { ...twilio, token: 'auTextToken0000000000001' },
      },
      tab('auTab', 'Url-less'),
      node('teamchat-start', 'auSlackStart', 'auTab', { environment: 'auSlack' }, [[]]),
      node('teamchat-start', 'auSocketStart', 'auTab', { environment: 'auSocket' }, [[]]),
      node('telco-call-start', 'auVoiceStart', 'auTab', { environment: 'auVoice' }, [[]]),
      node('telco-sms-start', 'auTextStart', 'auTab', { environment: 'auText' }, [[]]),
    ]);
    await red.waitForLog(/\[telco-messaging-environment:Url-less texts\] The API URL/);
    const lines = red.logs
      .slice(mark)
      .filter((l) => /\[warn\] \[[a-z-]+-environment:Url-less [A-Za-z]+\] /.test(l) && /API URL/.test(l))
      .map((l) => l.replace(/^.*?\[warn\] /, ''));
    const fix = "Correct it, or leave it empty for the provider's own API";
    const not = 'is not a URL with http:// or https:// and a host';
    should(lines).eql([
      `[teamchat-environment:Url-less Slack] The API URL "api.example.com" ${not}: Tasks that post to Slack stop with 4008. ${fix}`,
      `[teamchat-environment:Url-less socket] The API URL "localhost:3000" ${not}: Tasks that post to Slack stop with 4008. ${fix}`,
      `[teamchat-environment:Url-less socket] Socket Mode refused: the API URL ${not}, so no connection can be asked for; correct it, or leave it empty for Slack's own API`,
      `[telco-voice-environment:Url-less voice] The API URL "localhost:3000" ${not}: Call out and auto-deploy stop with 4008. ${fix}`,
      `[telco-messaging-environment:Url-less texts] The API URL "ftp://example.com" ${not}: messages cannot be sent (4008). ${fix}`,
    ]);
    const shown = (id: string, what: string) => eventually(() => statuses.get(id)?.text?.includes(what) && statuses.get(id), 5000, `${id} showing ${what}`);
    should(await shown('auSlackStart', 'unusable')).containEql({ fill: 'yellow', text: 'serves Url-less Slack · unusable API URL' });
    should(await shown('auSocketStart', 'refused')).containEql({
      fill: 'red',
      text: 'serves Url-less socket · unusable API URL · Socket Mode refused: unusable API URL',
    });
    should(await shown('auVoiceStart', 'unusable')).containEql({ fill: 'yellow', text: 'serves Url-less voice · unusable API URL' });
    should(await shown('auTextStart', 'unusable')).containEql({ fill: 'yellow', text: 'serves Url-less texts · unusable API URL' });
    statuses.close();
  });

  it('ask a messaging Environment for a Public base URL only when its Processes wait for answers or send files, in its one line', async function () {
    const mark = red.logs.length;
    const twilio = { accountSid: 'AC' + '0'.repeat(32), authToken: 't' };
    const texts = (id: string, name: string, extra: Record<string, unknown> = {}) => ({
      id,
      type: 'telco-messaging-environment',
      name,
      ...extra,
      credentials: { ...twilio, token: `${id}Token00000000000000001` },
    });
    await red.deploy([
      texts('nbText', 'Baseless texts'),
      texts('pbText', 'Public texts', { publicBaseUrl: 'https://texts.example.com' }),
      texts('qtText', 'Quiet texts'),
      tab('nbTab', 'Asks and sends a file'),
      node('telco-sms-start', 'nbStart', 'nbTab', { environment: 'nbText' }, [['nbFile']]),
      node('output-task', 'nbFile', 'nbTab', { text: 'Your receipt', attachments: 'ref-workspace: receipt.pdf' }, [['nbAsk']]),
      node('input-task', 'nbAsk', 'nbTab', { text: 'All right?' }, [[], []]),
      tab('pbTab', 'Asks, with a public address'),
      node('telco-sms-start', 'pbStart', 'pbTab', { environment: 'pbText' }, [['pbAsk']]),
      node('input-task', 'pbAsk', 'pbTab', { text: 'All right?' }, [[], []]),
      tab('qtTab', 'Only answers'),
      node('telco-sms-start', 'qtStart', 'qtTab', { environment: 'qtText' }, [['qtSay']]),
      node('output-task', 'qtSay', 'qtTab', { text: 'Thanks' }, [[]]),
    ]);
    for (const name of ['Public texts', 'Baseless texts', 'Quiet texts'])
      await red.waitForLog(new RegExp(`\\[telco-messaging-environment:${name}\\] Inbound URL`));
    const warnings = red.logs
      .slice(mark)
      .filter((l) => /\[warn\] \[telco-messaging-environment:/.test(l))
      .map((l) => l.replace(/^.*?\[warn\] /, ''));
    should(warnings).eql([
      '[telco-messaging-environment:Baseless texts] Tasks that wait for an answer need a Public base URL to take their error branch when a message is not delivered; Tasks that send files need a Public base URL to link them (SMS leaves them out, WhatsApp stops with 4008); the Test chat plays it without them',
    ]);
  });

  it('say once what a voice Environment lacks for Call out: a Caller ID, a Public base URL and the credentials, not that calls are hung up', async function () {
    const statuses = await watchStatuses(red);
    const mark = red.logs.length;
    await red.deploy([
      { id: 'coVoice', type: 'telco-voice-environment', name: 'Reminders', credentials: { token: 'coVoiceToken0000000000001' } },
      { id: 'bothVoice', type: 'telco-voice-environment', name: 'Both ways', credentials: { token: 'bothVoiceToken00000000001' } },
      tab('coTab', 'Reminder'),
      node('session-start', 'coStart', 'coTab', {}, [['coCall']]),
      node('telco-call-out', 'coCall', 'coTab', { environment: 'coVoice', to: '+15550100' }, [[], [], []]),
      tab('bothTab', 'Both ways'),
      node('telco-call-start', 'bothStart', 'bothTab', { environment: 'bothVoice' }, [[]]),
      node('session-start', 'bothOutStart', 'bothTab', {}, [['bothCall']]),
      node('telco-call-out', 'bothCall', 'bothTab', { environment: 'bothVoice', to: '+15550100' }, [[], [], []]),
    ]);
    await red.waitForLog(/\[telco-voice-environment:Both ways\] Start URL/);
    await red.waitForLog(/\[telco-voice-environment:Reminders\] Start URL/);
    const lines = red.logs
      .slice(mark)
      .filter((l) => /\[(warn|error)\] \[telco-voice-environment:(Reminders|Both ways)\]/.test(l))
      .map((l) => l.replace(/^.*?\[(warn|error)\] /, ''));
    should(lines).eql([
      '[telco-voice-environment:Reminders] Call out needs a Caller ID, a Public base URL and the Account SID and Auth Token to place calls; the Test chat plays it without them',
      '[telco-voice-environment:Both ways] Call start needs the Account SID and Auth Token to answer calls (without them calls are hung up, 4008); Call out needs a Caller ID, a Public base URL and the Account SID and Auth Token to place calls; the Test chat plays it without them',
    ]);
    should(lines.join('\n')).not.match(/Reminders\].*hung up/);
    const shown = await eventually(() => statuses.get('bothStart')?.text?.includes('missing') && statuses.get('bothStart'), 5000, 'bothStart missing');
    should(shown).containEql({ fill: 'yellow', text: 'serves Both ways · missing Caller ID, Public base URL, Account SID, Auth Token' });
    statuses.close();
  });

  it('warn at most once for each Environment when every example deploys together, as imported in the editor', async function () {
    const dir = join(REPO_ROOT, 'examples');
    const all = readdirSync(dir)
      .filter((f) => f.endsWith('.json'))
      .flatMap((f) => JSON.parse(readFileSync(join(dir, f), 'utf8')) as Array<Record<string, any>>);
    // The editor gives each imported Environment a token of its own.
    const environments = all.filter((n) => /-environment$/.test(n.type));
    for (const env of environments) env.credentials = { ...(env.credentials ?? {}), token: `${env.id}`.padEnd(24, '0') + 'tok1' };
    const mark = red.logs.length;
    await red.deploy(all);
    for (const env of environments) await red.waitForLog(new RegExp(`\\[${env.type}:${env.name.replace(/[()]/g, '\\$&')}\\] (Start|Event|Inbound) URL`));
    await red.waitForLog(/\[telco-voice-environment:Appointment reminders\] Call out/);
    const warnings = red.logs
      .slice(mark)
      .filter((l) => /\[(warn|error)\] \[[a-z-]+-environment:/.test(l))
      .map((l) => l.replace(/^.*?\[(warn|error)\] /, ''));
    const perEnvironment = new Map<string, number>();
    for (const w of warnings) perEnvironment.set(w.replace(/\].*$/, ']'), (perEnvironment.get(w.replace(/\].*$/, ']')) ?? 0) + 1);
    should([...perEnvironment].filter(([, count]) => count > 1)).eql([], warnings.join('\n'));
    should(warnings.length).be.belowOrEqual(environments.length);
    const reminder = warnings.find((w) => w.startsWith('[telco-voice-environment:Appointment reminders]'));
    should(reminder).match(
      /Call out needs a Caller ID, a Public base URL and the Account SID and Auth Token to place calls; the Test chat plays it without them$/,
    );
    should(reminder).not.match(/hung up/);
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
