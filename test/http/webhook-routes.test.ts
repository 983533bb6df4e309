import bcrypt from 'bcryptjs';
import should from 'should';
import { node, tab } from '../harness/flows';
import { NodeRed, eventually } from '../harness/node-red';
import { FakeSlack } from '../fakes/slack-api';
import { SlackEvents } from '../fakes/slack-events';
import { SIGNING_SECRET, teamchatEnvironment } from '../fakes/slack-flows';

/** httpNodeAuth as settings.js takes it: the password's bcrypt hash, made here from an obvious fake. */
const NODE_PASSWORD = 'fake-httpnode-password';
const NODE_AUTH = { user: 'hooks', pass: bcrypt.hashSync(NODE_PASSWORD, 8) };

/**
 * Webhook routes are served ahead of the editor's middleware, but never ahead of what guards
 * httpNode: with httpNodeAuth set, a webhook needs its password like any `http in` route.
 */
describe('webhook routes behind httpNodeAuth', function () {
  let red: NodeRed;
  let fake: FakeSlack;
  let slack: SlackEvents;

  before(async function () {
    fake = await FakeSlack.start();
    red = await NodeRed.start({ settings: { httpNodeAuth: NODE_AUTH } });
    await red.deploy([
      teamchatEnvironment('wenv', 'webhookRoutesToken000000001', fake, { sessionMode: 'PerChannel', useThreads: false }),
      tab('wp', 'Echo'),
      node('teamchat-start', 'ws', 'wp', { environment: 'wenv', variable: 'teamchat' }, [['wsay']]),
      node('output-task', 'wsay', 'wp', { text: 'You said {teamchat.text}' }, [['wend'], []]),
      node('end-task', 'wend', 'wp', {}),
    ]);
    slack = new SlackEvents(red, 'webhookRoutesToken000000001', SIGNING_SECRET, fake.team);
  });

  after(async function () {
    await red?.close();
    await fake?.close();
  });

  it('refuses a signed event without the httpNode password (401, nothing posted) and handles it with the password', async function () {
    const refused = await slack.post(slack.envelope(slack.direct('U1', 'no password')));
    should(refused.status).equal(401);
    const wrong = await slack.post(slack.envelope(slack.direct('U1', 'wrong password')), {
      headers: { Authorization: `Basic ${Buffer.from('hooks:guess').toString('base64')}` },
    });
    should(wrong.status).equal(401);
    const accepted = await slack.post(slack.envelope(slack.direct('U1', 'with password')), {
      headers: { Authorization: `Basic ${Buffer.from(`hooks:${NODE_PASSWORD}`).toString('base64')}` },
    });
    should(accepted.status).equal(200);
    await eventually(() => fake.calls.some((c) => c.method === 'chat.postMessage') || undefined, 5000, 'the reply');
    const posted = fake.calls.filter((c) => c.method === 'chat.postMessage').map((c) => c.body.text);
    should(posted).eql(['You said with password']);
  });
});
