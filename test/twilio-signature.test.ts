import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import twilio from 'twilio';
import { isSignedByTwilio } from '../src/telco/twilio-signature';

const KEY = 'twilio-signature-test-token';
const PARAMS = { From: '+15551234567', To: '+15550000000', Body: 'hi there', MessageSid: 'SM' + '1'.repeat(32) };

describe('Twilio webhook signature', () => {
  it('accepts the signature over the URL exactly as called, with or without a port', () => {
    for (const url of ['https://bots.example.com/api/hook', 'http://127.0.0.1:1880/api/hook?x=1']) {
      assert.equal(isSignedByTwilio(KEY, twilio.getExpectedTwilioSignature(KEY, url, PARAMS), url, PARAMS), true);
    }
  });

  it("still accepts twilio's variants: signed without the default port, called with it", () => {
    const signature = twilio.getExpectedTwilioSignature(KEY, 'https://bots.example.com/api/hook', PARAMS);
    assert.equal(isSignedByTwilio(KEY, signature, 'https://bots.example.com:443/api/hook', PARAMS), true);
  });

  it('refuses another key, a changed field, another URL, or a malformed signature', () => {
    const url = 'https://bots.example.com/api/hook';
    const signature = twilio.getExpectedTwilioSignature(KEY, url, PARAMS);
    assert.equal(isSignedByTwilio('another-token', signature, url, PARAMS), false);
    assert.equal(isSignedByTwilio(KEY, signature, url, { ...PARAMS, Body: 'hi there!' }), false);
    assert.equal(isSignedByTwilio(KEY, signature, 'https://bots.example.com/api/other', PARAMS), false);
    assert.equal(isSignedByTwilio(KEY, signature.slice(0, -2), url, PARAMS), false);
    assert.equal(isSignedByTwilio(KEY, '', url, PARAMS), false);
  });
});
