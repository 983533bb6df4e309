import { rmSync } from 'node:fs';
import should from 'should';
import twilio from 'twilio';
import { benchSettings } from '../../bench/flows';
import { HAND_ROLLED_PATH, handRolledFlow, userDirWithTwilio } from '../../bench/hand-rolled-flow';
import { ACCOUNT_SID, AUTH_TOKEN, inboundForm } from '../fakes/twilio-messaging-webhooks';
import { FakeTwilioMessagingApi } from '../fakes/twilio-messaging-api';
import { NodeRed, type HttpResult } from '../harness/node-red';

/**
 * The benchmark's peer, the messaging job done by hand with core nodes, does that job: the bench
 * compares the Sessions with it, so it must open on the first message, answer each next one through
 * the Messages API, and refuse a webhook Twilio did not sign, with `twilio` loaded by its function
 * node from the user dir (never installed).
 */
describe('bench: the hand-rolled messaging flow (peer)', function () {
  let red: NodeRed;
  let fake: FakeTwilioMessagingApi;
  const user = '+15557000001';
  const ours = '+15550000000';

  before(async function () {
    fake = await FakeTwilioMessagingApi.start(ACCOUNT_SID, AUTH_TOKEN);
    red = await NodeRed.start({ userDir: userDirWithTwilio(), settings: benchSettings() });
    await red.deploy(handRolledFlow(red.url('').replace(/\/$/, ''), fake.url, { accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN }));
  });
  after(async function () {
    await red?.close();
    if (red) rmSync(red.userDir, { recursive: true, force: true });
    await fake?.close();
  });

  const post = (params: Record<string, string>, authToken = AUTH_TOKEN): Promise<HttpResult> =>
    red.request('POST', HAND_ROLLED_PATH, new URLSearchParams(params).toString(), {
      'Content-Type': 'application/x-www-form-urlencoded',
      'X-Twilio-Signature': twilio.getExpectedTwilioSignature(authToken, red.url(HAND_ROLLED_PATH), params),
    });

  it('opens on the first message, then answers each next one with "You said …" from the number written to', async function () {
    const first = await post(inboundForm(user, ours, 'open'));
    should(first.status).equal(200);
    should(first.text).equal('<Response></Response>');
    should(first.headers.get('content-type')).startWith('text/xml');
    should(fake.messagesTo(user)).eql([]);

    const second = await post(inboundForm(user, ours, 'hello'));
    should(second.status).equal(200);
    should(second.text).equal('<Response></Response>');
    should(fake.messagesTo(user).map((m) => [m.From, m.Body])).eql([[ours, 'You said hello']]);
    should(red.logs.some((l) => /Installing module/.test(l))).be.false();
  });

  it('refuses a webhook signed with another token, and sends nothing', async function () {
    const other = '+15557000002';
    await post(inboundForm(other, ours, 'open'));
    const forged = await post(inboundForm(other, ours, 'hello'), 'not-the-auth-token');
    should(forged.status).equal(403);
    should(fake.messagesTo(other)).eql([]);
  });
});
