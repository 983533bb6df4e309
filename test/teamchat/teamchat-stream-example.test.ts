import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import should from 'should';
import { NodeRed, REPO_ROOT } from '../harness/node-red';

const EXAMPLE = join(REPO_ROOT, 'examples', 'Slack AI assistant.json');
const START = 'cssa000000000010';

/** The "Slack AI assistant" example deploys as shipped and runs in the Test chat with no account. */
describe('team chat: example "Slack AI assistant"', function () {
  this.timeout(30000);
  let red: NodeRed;

  before(async function () {
    red = await NodeRed.start();
  });
  after(async function () {
    await red?.close();
  });

  it('shows the streamed answer as one message, then routes the feedback typed in the Test chat', async function () {
    await red.deploy(JSON.parse(readFileSync(EXAMPLE, 'utf8')) as object[]);
    const started = await red.admin('POST', '/channel-sessions/test-sessions', { start: START });
    should(started.status).equal(201, started.text);
    should(started.body.state).equal('waiting', JSON.stringify(started.body.transcript));
    const bot = (started.body.transcript as any[]).filter((l) => l.from === 'bot' && l.kind !== 'status');
    should(bot.length).equal(1, JSON.stringify(started.body.transcript));
    should(bot[0].text).startWith('*What changed in our rates?*\nHere is what I found:');
    should(bot[0].text).endWith('tell the flow what you thought of it.');
    const rated = await red.admin('POST', `/channel-sessions/test-sessions/${started.body.id}/messages`, { text: 'negative' });
    should(rated.body.state).equal('completed', JSON.stringify(rated.body.transcript));
    const texts = (rated.body.transcript as any[]).map((l) => l.text);
    should(texts).containEql('Thanks for telling me. I will do better; try asking in other words.');
    should(texts).not.containEql('Thanks, glad it helped.');
  });
});
