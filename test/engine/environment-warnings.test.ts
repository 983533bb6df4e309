import should from 'should';
import { NodeRed } from '../harness/node-red';

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
});
