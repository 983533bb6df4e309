import twilio from 'twilio';
import should from 'should';
import { isSignedByTwilio } from '../../src/telco/twilio-signature';

const KEY = 'twilio-signature-test-token';
const PARAMS = { From: '+15551234567', To: '+15550000000', Body: 'hi there', MessageSid: 'SM' + '1'.repeat(32) };

describe('Twilio webhook signature', function () {
  it('accepts the signature over the URL exactly as called, with or without a port', function () {
    for (const url of ['https://bots.example.com/api/hook', 'http://127.0.0.1:1880/api/hook?x=1']) {
      should(isSignedByTwilio(KEY, twilio.getExpectedTwilioSignature(KEY, url, PARAMS), url, PARAMS)).equal(true);
    }
  });

  it("still accepts twilio's variants: signed without the default port, called with it", function () {
    const signature = twilio.getExpectedTwilioSignature(KEY, 'https://bots.example.com/api/hook', PARAMS);
    should(isSignedByTwilio(KEY, signature, 'https://bots.example.com:443/api/hook', PARAMS)).equal(true);
  });

  it('refuses another key, a changed field, another URL, or a malformed signature', function () {
    const url = 'https://bots.example.com/api/hook';
    const signature = twilio.getExpectedTwilioSignature(KEY, url, PARAMS);
    should(isSignedByTwilio('another-token', signature, url, PARAMS)).equal(false);
    should(isSignedByTwilio(KEY, signature, url, { ...PARAMS, Body: 'hi there!' })).equal(false);
    should(isSignedByTwilio(KEY, signature, 'https://bots.example.com/api/other', PARAMS)).equal(false);
    should(isSignedByTwilio(KEY, signature.slice(0, -2), url, PARAMS)).equal(false);
    should(isSignedByTwilio(KEY, '', url, PARAMS)).equal(false);
  });
});
