import should from 'should';
import { chain, tab, uid } from '../harness/flows';
import { NodeRed } from '../harness/node-red';
import { FakeTwilioMessagingApi } from '../fakes/twilio-messaging-api';
import {
  ACCOUNT_SID,
  AUTH_TOKEN,
  INBOUND,
  SIGNING_SECRET,
  inboundForm,
  messagingEnvironment,
  postInbound,
  sessionWhen,
  sessionsOf,
} from '../fakes/twilio-messaging-webhooks';

const sid = (n: number) => 'MG' + String(n).padStart(32, '0');
const START = '/api/TelcoModule/Messaging/start/';

/** Deploy: the inbound URL in the log, auto-deploy of the Messaging Service; the start endpoint. */
describe('messaging deploy and start endpoint', function () {
  let red: NodeRed;
  let fake: FakeTwilioMessagingApi;
  const t = (name: string) => `tok-${name}-${uid()}`;
  const tokens = {
    empty: t('empty'),
    ours: t('ours'),
    legacy: t('legacy'),
    foreign: t('foreign'),
    other: t('other'),
    noMg: t('nomg'),
    badMg: t('badmg'),
    noBase: t('nobase'),
    noCred: t('nocred'),
    start: t('start'),
  };
  let base: string;

  before(async function () {
    fake = await FakeTwilioMessagingApi.start(ACCOUNT_SID, AUTH_TOKEN);
    red = await NodeRed.start();
    base = red.url('').replace(/\/$/, '');
    const service = (n: number, url: string | null) =>
      fake.services.set(sid(n), { sid: sid(n), inboundRequestUrl: url, inboundMethod: 'GET', useInboundWebhookOnNumber: true });
    service(1, null);
    service(2, `${base}${INBOUND}${tokens.ours}`);
    service(3, 'https://legacy.example.com/sms/incoming');
    service(4, `https://other-host.example.com${INBOUND}someone-elses-token`);
    service(5, null);
    service(6, 'https://hooks.example:8443/catch/PathSecret123?token=QuerySecret456');
    const auto = (id: string, token: string, n: number | string, props: Record<string, unknown> = {}, creds: Record<string, string> = {}) =>
      messagingEnvironment(
        `env${id}`,
        token,
        fake,
        red,
        { name: id, autoDeploy: true, messagingServiceSid: typeof n === 'number' ? sid(n) : n, ...props },
        creds,
      );
    const z = uid('tab');
    await red.deploy([
      auto('Empty', tokens.empty, 1),
      auto('Ours', tokens.ours, 2),
      auto('Legacy', tokens.legacy, 3),
      auto('Foreign', tokens.foreign, 6),
      auto('Other', tokens.other, 4),
      auto('NoMg', tokens.noMg, ''),
      auto('BadMg', tokens.badMg, 'PN' + '0'.repeat(32)),
      auto('NoBase', tokens.noBase, 5, { publicBaseUrl: '' }),
      auto('NoCred', tokens.noCred, 5, {}, { authToken: '' }),
      messagingEnvironment('envStart', tokens.start, fake, red, {}, { webhookSigningSecret: SIGNING_SECRET }),
      tab(z, 'Outbound'),
      ...chain(z, [
        ['telco-sms-start', 'sStart', { environment: 'envStart' }],
        ['output-task', 'sHello', { text: 'Hello {message.from} from {message.to}: {message.text}' }],
        ['input-task', 'sIn', { prompt: '', resultVariable: 'answer' }],
        ['end-task', 'sEnd'],
      ]),
      ...chain(z, [
        ['telco-messenger-start', 'wStart', { environment: 'envStart' }],
        ['output-task', 'wHello', { text: 'Hola {message.text}' }],
        ['input-task', 'wIn', { prompt: '', resultVariable: 'answer' }],
        ['end-task', 'wEnd'],
      ]),
    ]);
  });
  after(async function () {
    await red?.close();
    await fake?.close();
  });

  const updates = (n: number) => fake.requests.filter((r) => r.method === 'POST' && r.path === `/v1/Services/${sid(n)}`);

  it('logs the inbound URL on deploy', async function () {
    await red.waitForLog(new RegExp(`Inbound URL: ${base}${INBOUND}${tokens.empty}$`));
    await red.waitForLog(new RegExp(`Inbound URL: ${INBOUND}${tokens.noBase} \\(set the Public base URL`));
  });

  it('sets an empty Inbound Request URL and turns off use-webhook-on-number', async function () {
    await red.waitForLog(new RegExp(`Auto-deploy for "Empty": Messaging Service ${sid(1)} Inbound Request URL set to ${base}${INBOUND}${tokens.empty}`));
    const [update] = updates(1);
    should(update.form).eql({ InboundRequestUrl: `${base}${INBOUND}${tokens.empty}`, InboundMethod: 'POST', UseInboundWebhookOnNumber: 'false' });
    should(update.authorization).equal('Basic ' + Buffer.from(`${ACCOUNT_SID}:${AUTH_TOKEN}`).toString('base64'));
    should(fake.services.get(sid(1))?.useInboundWebhookOnNumber).equal(false);
  });

  it("sets it again when it is already this Environment's URL, without a replace line", async function () {
    await red.waitForLog(new RegExp(`Auto-deploy for "Ours": .* set to `));
    should(updates(2).length).equal(1);
    should(red.logs.some((l) => l.includes('"Ours"') && l.includes('replaced'))).be.false();
  });

  it('replaces a foreign URL and says so in the log', async function () {
    const line = await red.waitForLog(/Auto-deploy for "Legacy": .*replaced by/);
    should(line).match(/\[warn\]/);
    should(line).containEql(
      `https://legacy.example.com replaced by ${base}${INBOUND}${tokens.legacy}; inbound messages on its numbers now start Sessions here`,
    );
    should(fake.services.get(sid(3))?.inboundRequestUrl).equal(`${base}${INBOUND}${tokens.legacy}`);
  });

  it("names a foreign URL it replaced by its origin only: its path and query may hold that system's secret", async function () {
    const line = await red.waitForLog(/Auto-deploy for "Foreign": .*replaced by/);
    should(line).containEql(`Inbound Request URL https://hooks.example:8443 replaced by ${base}${INBOUND}${tokens.foreign};`);
    should(line).not.containEql('PathSecret123');
    should(line).not.containEql('QuerySecret456');
    should(red.logs.filter((l) => l.includes('PathSecret123') || l.includes('QuerySecret456'))).eql([]);
  });

  it("refuses to take over another Environment's messaging endpoint", async function () {
    const line = await red.waitForLog(/Auto-deploy for "Other" refused/);
    should(line).match(/\[error\]/);
    should(line).match(/Use one Messaging Service per Environment/);
    should(line).not.containEql('someone-elses-token');
    should(updates(4).length).equal(0);
    should(fake.services.get(sid(4))?.inboundRequestUrl).equal(`https://other-host.example.com${INBOUND}someone-elses-token`);
  });

  it('logs the skips (no MG SID, no public base URL) and 4008 without credentials', async function () {
    await red.waitForLog(/Auto-deploy skipped for "NoMg": the Messaging Service SID is empty/);
    await red.waitForLog(/Auto-deploy skipped for "BadMg": the Messaging Service SID "PN0+" does not begin with MG/);
    await red.waitForLog(/Auto-deploy skipped for "NoBase": no public base URL/);
    await red.waitForLog(/\[error\] .*4008 Auto-deploy for "NoCred" failed: Auth Token not set/);
    should(updates(5).length).equal(0);
    should(fake.requests.filter((r) => r.path === `/v1/Services/${sid(5)}`).length).equal(0);
  });

  describe('start endpoint', function () {
    const post = (token: string, body: unknown, auth?: string) => red.request('POST', START + token, body, auth ? { Authorization: auth } : {});

    it('starts an SMS Session toward a number (202), then answers 200 existing for the same pair', async function () {
      const res = await post(tokens.start, { to: '+15551400001', from: '+15550001000', text: 'your order shipped' }, `Bearer ${AUTH_TOKEN}`);
      should(res.status).equal(202, res.text);
      should(res.body.sessionId).match(/^[0-9a-f]{24}$/);
      should(fake.messagesTo('+15551400001').map((m) => [m.From, m.Body])).eql([['+15550001000', 'Hello +15551400001 from +15550001000: your order shipped']]);
      const again = await post(tokens.start, { to: '+15551400001', from: '+15550001000', text: 'again' }, `Bearer ${SIGNING_SECRET}`);
      should(again.status).equal(200);
      should(again.body).eql({ sessionId: res.body.sessionId, existing: true });
      const [session] = await sessionsOf(red, 'envStart', '+15551400001', '+15550001000');
      should(session.waitingAt.nodeId).equal('sIn', 'the existing Session was left alone');
      should(session.vars.answer).equal(undefined);
      await postInbound(red, tokens.start, inboundForm('+15551400001', '+15550001000', 'thanks'), SIGNING_SECRET);
      const done = await sessionWhen(red, 'envStart', '+15551400001', '+15550001000', (s) => s.state === 'completed', 'the reply');
      should(done.vars.answer).equal('thanks', "the user's reply continues the started Session");
    });

    it('starts a messenger Session when both numbers carry whatsapp: (in any case; kept as the provider writes it)', async function () {
      const res = await post(tokens.start, { to: 'WhatsApp:+447700900301', from: 'WHATSAPP:+14155238886' }, `Bearer ${AUTH_TOKEN}`);
      should(res.status).equal(202, res.text);
      const [session] = await sessionsOf(red, 'envStart', 'whatsapp:+447700900301', 'whatsapp:+14155238886');
      should(session.channel).equal('TelcoMessagingMessenger');
      // That person has not written within 24 hours: WhatsApp takes only a template, so the
      // free-form greeting stops with 3005 before it is sent.
      const ended = await sessionWhen(
        red,
        'envStart',
        'whatsapp:+447700900301',
        'whatsapp:+14155238886',
        (s) => s.state !== 'running' && s.state !== 'waiting',
        'the Session to end',
      );
      should(ended.log.find((e: any) => e.code === 3005)?.message).match(/24 hours/);
      should(fake.attemptsTo('whatsapp:+447700900301')).have.length(0);
    });

    it('starts one Session for concurrent requests on one pair', async function () {
      const results = await Promise.all(
        Array.from({ length: 5 }, () => post(tokens.start, { to: '+15551400002', from: '+15550001000', text: 'x' }, `Bearer ${AUTH_TOKEN}`)),
      );
      should(results.map((r) => r.status).sort()).eql([200, 200, 200, 200, 202]);
      should(new Set(results.map((r) => r.body.sessionId)).size).equal(1);
      should(fake.messagesTo('+15551400002').length).equal(1);
    });

    it('answers 401 without the right bearer, 404 for an unknown token, 400 for a bad body', async function () {
      const body = { to: '+15551400003', from: '+15550001000' };
      should((await post(tokens.start, body)).status).equal(401);
      should((await post(tokens.start, body, 'Bearer wrong')).status).equal(401);
      should((await post(tokens.start, body, `Basic ${AUTH_TOKEN}`)).status).equal(401);
      should((await post('no-such-token', body, `Bearer ${AUTH_TOKEN}`)).status).equal(404);
      const missing = await post(tokens.start, { from: '+15550001000' }, `Bearer ${AUTH_TOKEN}`);
      should(missing.status).equal(400);
      should(missing.body.error).match(/to \(the user's number\) and from \(our number\) are required/);
      const mixed = await post(tokens.start, { to: 'whatsapp:+15551400003', from: '+15550001000' }, `Bearer ${AUTH_TOKEN}`);
      should(mixed.status).equal(400);
      for (const [to, from] of [
        ['(555) 140-0003', '+15550001000'],
        ['+15551400003', '15550001000'],
        ['whatsapp:555 1400003', 'whatsapp:+14155238886'],
      ]) {
        const notNumber = await post(tokens.start, { to, from }, `Bearer ${AUTH_TOKEN}`);
        should(notNumber.status).equal(400, `${to} / ${from}`);
        should(notNumber.body.error).match(/is not a number in E\.164 form/);
      }
      should(await sessionsOf(red, 'envStart', '(555) 140-0003', '+15550001000')).have.length(0);
      const notJson = await red.request('POST', START + tokens.start, '{nope', { Authorization: `Bearer ${AUTH_TOKEN}`, 'Content-Type': 'application/json' });
      should(notJson.status).equal(400);
      should(fake.messagesTo('+15551400003').length).equal(0);
    });
  });
});
