import should from 'should';
import { isSignedBySlack } from '../../src/teamchat/signature';

/** Slack's published example request (api.slack.com "Verifying requests from Slack"). */
const SECRET = '8f742231b10e8888abcd99yyyzzz85a5';
const TIMESTAMP = '1531420618';
const BODY =
  'token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c';
const SIGNATURE = 'v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503';

describe('team chat: Slack v0 request signature', function () {
  const at = (offset: number) => Number(TIMESTAMP) + offset;

  it("accepts Slack's published example within 5 minutes either way", function () {
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
