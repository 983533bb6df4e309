import should from 'should';
import type twilio from 'twilio';
import { providerError } from '../../src/messaging/provider-client';
import { twilioRestClient } from '../../src/telco/twilio-http-client';
import { TwilioConnectionLost, TwilioFault } from '../../src/telco/twilio-faults';
import { freePort } from '../harness/node-red';
import { FakeTwilioMessagingApi } from '../fakes/twilio-messaging-api';
import { ACCOUNT_SID, AUTH_TOKEN } from '../fakes/twilio-messaging-webhooks';

const FROM = '+15550002000';

/**
 * The real `twilio` client with our http client, against the fake Twilio API on loopback: which
 * faults are tried again, how long it waits, and what the 4001 says when it gives up.
 */
describe('Twilio REST calls: retries and what a failure says', function () {
  this.timeout(15000);
  let fake: FakeTwilioMessagingApi;
  let client: twilio.Twilio;
  let n = 0;
  const user = () => `+1555400${String(++n).padStart(4, '0')}`;
  const send = (to: string, api: twilio.Twilio = client) => api.messages.create({ from: FROM, to, body: 'hello' });
  const failure = async (to: string, api: twilio.Twilio = client): Promise<Error> => {
    const err = await send(to, api).then(
      () => undefined,
      (e: Error) => e,
    );
    should.exist(err, 'the send should have failed');
    return err as Error;
  };

  before(async () => {
    fake = await FakeTwilioMessagingApi.start(ACCOUNT_SID, AUTH_TOKEN);
    client = twilioRestClient(ACCOUNT_SID, AUTH_TOKEN, fake.url, 2000);
  });
  after(async () => {
    await fake?.close();
  });

  it("waits out a 429's Retry-After, then sends the message once", async () => {
    const to = user();
    fake.inject(to, { status: 429, retryAfter: '1', code: 20429, message: 'Too Many Requests' });
    const sent = await send(to);
    sent.to.should.equal(to);
    const [first, second] = fake.attemptsTo(to);
    fake.attemptsTo(to).should.have.length(2);
    (second.at - first.at).should.be.aboveOrEqual(950);
    fake.messagesTo(to).should.have.length(1);
  });

  it('tries a 503 again and sends the message once', async () => {
    const to = user();
    fake.inject(to, { status: 503 });
    await send(to);
    fake.attemptsTo(to).should.have.length(2);
    fake
      .messagesTo(to)
      .map((m) => m.Body)
      .should.eql(['hello']);
  });

  it('tries again after the connection is reset, and sends the message once', async () => {
    const to = user();
    fake.inject(to, { reset: true });
    await send(to);
    fake.attemptsTo(to).should.have.length(2);
    fake.messagesTo(to).should.have.length(1);
  });

  it('gives up after 2 retries: 503 three times is a 4001 naming the status and the attempts', async () => {
    const to = user();
    fake.inject(
      to,
      { status: 503, code: 20503, message: 'Service is unavailable' },
      { status: 503 },
      { status: 503, code: 20503, message: 'Service is unavailable' },
    );
    const err = await failure(to);
    err.should.be.instanceOf(TwilioFault);
    fake.attemptsTo(to).should.have.length(3);
    fake.messagesTo(to).should.have.length(0);
    const task = providerError(err, `the message to ${to}`);
    task.code.should.equal(4001);
    task.message.should.equal(`Twilio did not take the message to ${to}: Service is unavailable (Twilio error 20503, HTTP 503); 3 attempts`);
    // The next send is not held back by the earlier failures.
    await send(to);
    fake.messagesTo(to).should.have.length(1);
  });

  it('a connection reset three times is a 4001 saying Twilio could not be reached', async () => {
    const to = user();
    fake.inject(to, { reset: true }, { reset: true }, { reset: true });
    const task = providerError(await failure(to), `the message to ${to}`);
    task.message.should.match(
      new RegExp(
        `^Twilio could not be reached for the message to \\${to}: the connection was reset before Twilio answered \\((ECONNRESET|UND_ERR_SOCKET)\\); 3 attempts$`,
      ),
    );
    fake.attemptsTo(to).should.have.length(3);
    fake.messagesTo(to).should.have.length(0);
  });

  it('does not wait a Retry-After longer than 10 s: one attempt, and the 4001 says what Twilio asked', async () => {
    const to = user();
    fake.inject(to, { status: 429, retryAfter: '60', code: 20429, message: 'Too Many Requests' });
    const started = Date.now();
    const task = providerError(await failure(to), `the message to ${to}`);
    (Date.now() - started).should.be.below(2000);
    task.message.should.equal(
      `Twilio did not take the message to ${to}: Too Many Requests (Twilio error 20429, HTTP 429); Twilio asked to wait 60 s, longer than the 10 s a call may wait`,
    );
    fake.attemptsTo(to).should.have.length(1);
  });

  it('never sends again after a timeout, since Twilio may have taken it; the 4001 says it did not answer', async () => {
    const to = user();
    // The hold is well past the 0.5 s timeout, so the answer surely comes after it.
    const quick = twilioRestClient(ACCOUNT_SID, AUTH_TOKEN, fake.url, 500);
    fake.inject(to, { holdMs: 2500 });
    const err = await failure(to, quick);
    const task = providerError(err, `the message to ${to}`);
    task.message.should.equal(`Twilio did not answer within 0.5 s for the message to ${to}; it was not sent again, as Twilio may have taken it`);
    // The slow Twilio did take it: the user gets exactly one copy.
    fake.attemptsTo(to).should.have.length(1);
    await new Promise((r) => setTimeout(r, 2500));
    fake.attemptsTo(to).should.have.length(1);
    fake.messagesTo(to).should.have.length(1);
  });

  it('does not retry a refusal (400): one attempt, "Twilio rejected" with Twilio\'s reason', async () => {
    const to = user();
    fake.rejectTo.add(to);
    const task = providerError(await failure(to), `the message to ${to}`);
    task.message.should.equal(`Twilio rejected the message to ${to}: The 'To' number ${to} is not a valid phone number. (Twilio error 21211, HTTP 400)`);
    fake.attemptsTo(to).should.have.length(1);
  });

  it('a refused connection is tried 3 times, then a 4001 saying so', async () => {
    const closed = twilioRestClient(ACCOUNT_SID, AUTH_TOKEN, `http://127.0.0.1:${await freePort()}`, 2000);
    const to = user();
    const task = providerError(await failure(to, closed), `the message to ${to}`);
    task.message.should.equal(`Twilio could not be reached for the message to ${to}: the connection was refused (ECONNREFUSED); 3 attempts`);
  });

  describe('sent at most once (retryUnsentOnly, as for a call create)', function () {
    const once = () => twilioRestClient(ACCOUNT_SID, AUTH_TOKEN, fake.url, 2000, { retryUnsentOnly: true });

    it('a connection reset once the request was written is not tried again: one attempt, a TwilioConnectionLost', async () => {
      const to = user();
      fake.inject(to, { reset: true });
      const err = await failure(to, once());
      err.should.be.instanceOf(TwilioConnectionLost);
      fake.attemptsTo(to).should.have.length(1);
      (err as TwilioConnectionLost)
        .describe(`the message to ${to}`)
        .should.equal(
          `the connection to Twilio failed after the message to ${to} may have been sent: the connection was reset before Twilio answered (ECONNRESET); it was not sent again, as Twilio may have taken it`,
        );
    });

    it('a 503 is not tried again; a 429 is', async () => {
      const to = user();
      fake.inject(to, { status: 503 });
      (await failure(to, once())).should.not.be.instanceOf(TwilioFault);
      fake.attemptsTo(to).should.have.length(1);
      const later = user();
      fake.inject(later, { status: 429, retryAfter: '0', code: 20429, message: 'Too Many Requests' });
      await send(later, once());
      fake.attemptsTo(later).should.have.length(2);
      fake.messagesTo(later).should.have.length(1);
    });

    it('a refused connection (nothing was sent) is still tried 3 times', async () => {
      const closed = twilioRestClient(ACCOUNT_SID, AUTH_TOKEN, `http://127.0.0.1:${await freePort()}`, 2000, { retryUnsentOnly: true });
      const to = user();
      const task = providerError(await failure(to, closed), `the message to ${to}`);
      task.message.should.equal(`Twilio could not be reached for the message to ${to}: the connection was refused (ECONNREFUSED); 3 attempts`);
    });
  });
});
