import should from 'should';
import type twilio from 'twilio';
import { findTwilioMessage, LOOKUP_PAGE_SIZE, LOOKUP_PAGES } from '../../src/messaging/effect-lookup';
import { twilioRestClient } from '../../src/telco/twilio-http-client';
import { FakeTwilioMessagingApi } from '../fakes/twilio-messaging-api';
import { ACCOUNT_SID, AUTH_TOKEN } from '../fakes/twilio-messaging-webhooks';

const FROM = '+15550002000';

/**
 * A message a step sent, and whose answer never came (the process died waiting), is looked up in
 * the provider's Messages list before it is sent again. The real `twilio` client with our http
 * client against the fake Twilio API on loopback, which lists the messages it made.
 */
describe('Twilio messages: finding a message the step sent', function () {
  this.timeout(15000);
  let fake: FakeTwilioMessagingApi;
  let client: twilio.Twilio;
  let n = 0;
  const user = () => `+1555500${String(++n).padStart(4, '0')}`;
  const send = (to: string, body: string, mediaUrl?: string[]) => client.messages.create({ from: FROM, to, body, ...(mediaUrl ? { mediaUrl } : {}) });

  before(async () => {
    fake = await FakeTwilioMessagingApi.start(ACCOUNT_SID, AUTH_TOKEN);
    client = twilioRestClient(ACCOUNT_SID, AUTH_TOKEN, fake.url, 2000);
  });
  after(async () => {
    await fake?.close();
  });

  it('finds the message by number pair, body and time, asking for the day it was sent', async () => {
    const to = user();
    const since = Date.now();
    const sent = await send(to, 'Your name?');
    should(await findTwilioMessage(client, { from: FROM, to, body: 'Your name?' }, since)).eql({ sid: sent.sid, status: 'sent' });
    const asked = fake.listRequests().at(-1)!.form;
    asked.should.containEql({ To: to, From: FROM, 'DateSent>': new Date(since).toISOString().slice(0, 10) });
  });

  it('finds nothing when the body differs, the media count differs, or the message is from before the step', async () => {
    const to = user();
    await send(to, 'Before the step');
    // Made 5 s before the step began.
    fake.made.at(-1)!.created -= 5000;
    const since = Date.now();
    await send(to, 'With a picture', ['https://example.com/a.png']);
    should(await findTwilioMessage(client, { from: FROM, to, body: 'Before the step' }, since)).be.undefined();
    should(await findTwilioMessage(client, { from: FROM, to, body: 'Something else' }, since)).be.undefined();
    should(await findTwilioMessage(client, { from: FROM, to, body: 'With a picture' }, since)).be.undefined();
    should(await findTwilioMessage(client, { from: FROM, to, body: 'With a picture', mediaCount: 1 }, since)).have.property('sid');
  });

  it('finds an SMS whose file links carry other tokens (a step run again makes its links anew), not one naming another file', async () => {
    const to = user();
    const since = Date.now();
    const link = (token: string) => `https://bots.example.com/api/TelcoModule/Messaging/media/${token}`;
    const sent = await send(to, `Your files\nreport.pdf: ${link('0a1b2c.1795000000.Zm9v-YmFy_')}`);
    const again = `Your files\nreport.pdf: ${link('9f8e7d.1795000042.YmF6-cXV4_')}`;
    should(await findTwilioMessage(client, { from: FROM, to, body: again }, since)).eql({ sid: sent.sid, status: 'sent' });
    should(await findTwilioMessage(client, { from: FROM, to, body: `Your files\nother.pdf: ${link('9f8e7d.1795000042.YmF6-cXV4_')}` }, since)).be.undefined();
  });

  it("finds a message still queued at Twilio (no date sent, so not in the day's list) on the newest page of the unfiltered list", async () => {
    const to = user();
    const since = Date.now();
    const sent = await send(to, 'Queued');
    fake.made.at(-1)!.queued = true;
    should(await findTwilioMessage(client, { from: FROM, to, body: 'Queued' }, since)).eql({ sid: sent.sid, status: 'queued' });
    const [dayList, newest] = fake
      .listRequests()
      .slice(-2)
      .map((r) => r.form);
    dayList.should.have.property('DateSent>');
    newest.should.not.have.property('DateSent>');
  });

  it('finds a message the fake made and never answered', async () => {
    const to = user();
    const since = Date.now();
    fake.inject(to, { madeThenHeld: true });
    void send(to, 'Held').catch(() => undefined);
    await new Promise<void>((resolve) => {
      const wait = () => (fake.made.some((m) => m.to === to) ? resolve() : setTimeout(wait, 10));
      wait();
    });
    const found = await findTwilioMessage(client, { from: FROM, to, body: 'Held' }, since);
    should(found?.sid).equal(fake.made.find((m) => m.to === to)!.sid);
  });

  it('reads past the first page, and no further than its bound', async () => {
    const to = user();
    const since = Date.now();
    await send(to, 'The one');
    for (let i = 0; i < LOOKUP_PAGE_SIZE; i++) await send(to, `later ${i}`);
    const before = fake.listRequests().length;
    should(await findTwilioMessage(client, { from: FROM, to, body: 'The one' }, since)).have.property('sid');
    (fake.listRequests().length - before).should.equal(2);
    for (let i = 0; i < LOOKUP_PAGE_SIZE * LOOKUP_PAGES; i++) await send(to, `even later ${i}`);
    const err = await findTwilioMessage(client, { from: FROM, to, body: 'The one' }, since).then(
      () => undefined,
      (e: Error) => e,
    );
    should.exist(err, 'a search cut at its bound cannot say the message is not there');
  });

  it('throws when Twilio fails the list, saying so as a send failure does', async () => {
    const to = user();
    fake.injectList({ status: 500 }, { status: 500 }, { status: 500 });
    const err = await findTwilioMessage(client, { from: FROM, to, body: 'x' }, Date.now()).then(
      () => undefined,
      (e: Error) => e,
    );
    should.exist(err);
    err!.message.should.match(/Twilio did not take the Messages list request: .*HTTP 500/);
    fake
      .listRequests()
      .slice(-3)
      .map((r) => (r.fault as { status?: number } | undefined)?.status)
      .should.eql([500, 500, 500]);
  });

  it('throws when Twilio refuses the list', async () => {
    fake.injectList({ status: 403, code: 20003, message: 'Permission denied' });
    const err = await findTwilioMessage(client, { from: FROM, to: user(), body: 'x' }, Date.now()).then(
      () => undefined,
      (e: Error) => e,
    );
    should.exist(err);
    err!.message.should.match(/Twilio rejected the Messages list request: Permission denied/);
  });
});
