import { createHmac } from 'node:crypto';
import should from 'should';
import { isSignedBySlack } from '../../src/teamchat/signature';

/** An obviously fake secret; the request is signed here the way Slack signs one (v0, HMAC-SHA256 of "v0:<ts>:<body>"). */
const SECRET = 'fake-slack-signing-secret-for-tests';
const TIMESTAMP = '1531420618';
const BODY = 'token=fake-verification-token&team_id=T0FAKE&channel_id=C0FAKE&user_id=U0FAKE&user_name=roadrunner&command=%2Fwebhook-collect&text=';
const SIGNATURE = `v0=${createHmac('sha256', SECRET).update(`v0:${TIMESTAMP}:${BODY}`).digest('hex')}`;

describe('team chat: Slack v0 request signature', function () {
  const at = (offset: number) => Number(TIMESTAMP) + offset;

  it('accepts a request signed as Slack signs it within 5 minutes either way', function () {
    should(isSignedBySlack(Buffer.from(BODY), SIGNATURE, TIMESTAMP, SECRET, at(0))).equal(true);
    should(isSignedBySlack(Buffer.from(BODY), SIGNATURE, TIMESTAMP, SECRET, at(300))).equal(true);
    should(isSignedBySlack(Buffer.from(BODY), SIGNATURE, TIMESTAMP, SECRET, at(-300))).equal(true);
  });

  it('refuses it outside the window, with another secret, a changed byte, or a malformed header', function () {
    should(isSignedBySlack(Buffer.from(BODY), SIGNATURE, TIMESTAMP, SECRET, at(301))).equal(false);
    should(isSignedBySlack(Buffer.from(BODY), SIGNATURE, TIMESTAMP, SECRET, at(-301))).equal(false);
    should(isSignedBySlack(Buffer.from(BODY), SIGNATURE, TIMESTAMP, 'another-secret', at(0))).equal(false);
    should(isSignedBySlack(Buffer.from(BODY.replace('roadrunner', 'roadrunnes')), SIGNATURE, TIMESTAMP, SECRET, at(0))).equal(false);
    should(isSignedBySlack(Buffer.from(BODY), SIGNATURE.replace('v0=', 'v1='), TIMESTAMP, SECRET, at(0))).equal(false);
    should(isSignedBySlack(Buffer.from(BODY), SIGNATURE.slice(0, -2), TIMESTAMP, SECRET, at(0))).equal(false);
    should(isSignedBySlack(Buffer.from(BODY), SIGNATURE, 'soon', SECRET, at(0))).equal(false);
    should(isSignedBySlack(Buffer.from(BODY), SIGNATURE, TIMESTAMP, '', at(0))).equal(false);
  });
});
