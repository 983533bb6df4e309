import should from 'should';
import { node, tab, uid } from '../harness/flows';
import { Hold } from '../harness/hold';
import { NodeRed, eventually } from '../harness/node-red';
import { FakeSlack } from '../fakes/slack-api';
import { SlackEvents } from '../fakes/slack-events';
import { SIGNING_SECRET, teamchatEnvironment } from '../fakes/slack-flows';

/**
 * Slack after a crash (SIGKILL): a step that posted its reply and had not committed yet (it waited
 * on a slow request) runs again after the restart, gets the posted message (its ts) from its
 * journal instead of posting it again, and goes on: the person sees each message once.
 */
describe('team chat: a step cut by kill -9 posts each reply once after the restart', function () {
  this.timeout(120000);
  let fake: FakeSlack;
  let hold: Hold;
  let red: NodeRed;

  beforeEach(async function () {
    fake = await FakeSlack.start();
    hold = new Hold();
    await hold.start();
    red = await NodeRed.start();
  });
  afterEach(async function () {
    await red?.close();
    await hold?.close();
    await fake?.close();
  });

  it('the posted reply is not posted again; the next prompt follows once, in the thread the reply opened', async function () {
    const z = uid('tab');
    const envId = uid('env');
    const token = `tok${uid('x')}AAAAAAAAAAAAAAAAAAAA`;
    await red.deploy([
      tab(z, 'Slow step'),
      teamchatEnvironment(envId, token, fake),
      node('teamchat-start', 'sxStart', z, { environment: envId, variable: 'teamchat', testData: {} }, [['sxGot']]),
      node('output-task', 'sxGot', z, { text: 'got {teamchat.text}' }, [['sxWait'], []]),
      node('http request', 'sxWait', z, { method: 'GET', ret: 'txt', url: `http://127.0.0.1:${hold.port}/slow`, paytoqs: 'ignore' }, [['sxAsk']]),
      node('input-task', 'sxAsk', z, { prompt: 'What else?', resultVariable: 'answer' }, [['sxEnd'], []]),
      node('end-task', 'sxEnd', z, {}),
    ]);
    const slack = new SlackEvents(red, token, SIGNING_SECRET, fake.team);
    should((await slack.post(slack.envelope(slack.direct('U1', 'A1')))).status).equal(200);
    await eventually(() => hold.calls >= 1, 15000, 'the step to wait on its slow request after the reply');
    const posts = () => fake.callsOf('chat.postMessage').map((c) => ({ text: c.body.text, thread: c.body.thread_ts }));
    should(posts().map((p) => p.text)).eql(['got A1']);
    await red.kill();
    hold.open();
    await red.relaunch();
    await eventually(() => posts().some((p) => p.text === 'What else?'), 20000, 'the next prompt after the restart');
    await new Promise((r) => setTimeout(r, 500));
    should(posts().map((p) => p.text)).eql(['got A1', 'What else?']);
    // The prompt goes in the thread the first post opened, as its recorded ts says.
    should(posts()[1].thread).equal(posts()[0].thread);
  });
});
