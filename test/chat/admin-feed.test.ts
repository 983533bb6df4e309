import should from 'should';
import { NodeRed, eventually } from '../harness/node-red';
import { chain, tab } from '../harness/flows';

// Node-RED's own comms client library (a dependency of the runtime under test).

const WebSocket = require('ws');

describe('editor feed: Processes and transcript lines over comms', function () {
  this.timeout(60000);
  let red: NodeRed;
  before(async function () {
    red = await NodeRed.start();
    await red.deploy([
      tab('pFeed', 'Feed'),
      ...chain('pFeed', [
        ['session-start', 'feedStart', { name: 'Chat start', testData: { text: 'hi' } }],
        ['output-task', 'feedOut', { text: 'hello {execution.channel}' }],
        ['input-task', 'feedIn', { prompt: 'and?', resultVariable: 'a' }],
        ['end-task', 'feedEnd'],
      ]),
    ]);
  });
  after(async () => red?.close());

  it('lists Processes with their starts and test data', async function () {
    const res = await red.admin('GET', '/channel-sessions/processes');
    should(res.status).equal(200);
    const feed = res.body.find((p: any) => p.id === 'pFeed');
    should(feed.label).equal('Feed');
    should(feed.starts.map((s: any) => [s.id, s.type, s.name, s.testData.text])).eql([['feedStart', 'session-start', 'Chat start', 'hi']]);
  });

  it('pushes each new transcript line of a test Session to the editor', async function () {
    const received: Array<{ topic: string; data: any }> = [];
    const ws = new WebSocket(red.url('/comms').replace('http', 'ws'));
    await new Promise((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    ws.on('message', (raw: Buffer) => {
      for (const m of JSON.parse(raw.toString())) received.push(m);
    });
    ws.send(JSON.stringify({ subscribe: 'channel-sessions/session/#' }));
    await new Promise((r) => setTimeout(r, 100));
    const session = (await red.admin('POST', '/channel-sessions/test-sessions', { start: 'feedStart' })).body;
    await red.admin('POST', `/channel-sessions/test-sessions/${session.id}/messages`, { text: 'done' });
    const mine = await eventually(
      () => {
        const lines = received.filter((m) => m.topic === `channel-sessions/session/${session.id}`);
        return lines.some((m) => m.data.state === 'completed') ? lines : undefined;
      },
      3000,
      'the pushed lines',
    );
    const texts = mine.map((m) => m.data.line?.text).filter(Boolean);
    should(texts).eql(['hi', 'hello Chat', 'and?', 'done', 'EndTask reached']);
    for (const expected of ['hi', 'hello Chat', 'and?', 'done']) should(texts).containEql(expected);
    ws.close();
  });
});
