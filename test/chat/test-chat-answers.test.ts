import should from 'should';
import { chain, node, tab } from '../harness/flows';
import { NodeRed } from '../harness/node-red';

/**
 * What the Test chat's routes take as an answer: a click names the message its button was on, and
 * is refused once that question has been answered (a page that did not know yet, a second tab).
 */
describe('test chat: stale clicks', function () {
  this.timeout(60000);
  let red: NodeRed;

  before(async () => {
    red = await NodeRed.start();
    await red.deploy([
      tab('tqflow', 'Two questions'),
      ...chain(
        'tqflow',
        [
          ['session-start', 'tqstart', { name: 'Start', testData: { text: 'hi' } }],
          ['input-task', 'tqfirst', { name: 'First', prompt: 'Yes or no?', resultVariable: 'first', outputs: 2 }],
          ['input-task', 'tqsecond', { name: 'Second', prompt: 'Why?', resultVariable: 'second', outputs: 2 }],
          ['end-task', 'tqend'],
        ],
        { tqfirst: [['tqsecond'], ['tqsilent']] },
      ),
      node('output-task', 'tqsilent', 'tqflow', { text: 'You said nothing.' }, [['tqsecond'], []]),
    ]);
  });
  after(async () => {
    await red?.close();
  });

  const start = async () => {
    const res = await red.admin('POST', '/channel-sessions/test-sessions', { start: 'tqstart', testData: { text: 'hi' } });
    should(res.status).equal(201, res.text);
    return res.body;
  };
  const askedAt = (session: any, text: string) => session.transcript.find((l: any) => l.from === 'bot' && l.text === text).at;

  it('refuses a click on a button of a question already answered, and keeps the Session where it waits', async () => {
    const session = await start();
    const asked = askedAt(session, 'Yes or no?');
    const first = await red.admin('POST', `/channel-sessions/test-sessions/${session.id}/actions`, { action_id: 'yes', value: 'yes', text: 'Yes', asked });
    should(first.status).equal(200, first.text);
    should(first.body.vars.first).equal('yes');
    for (const [route, body] of [
      ['actions', { action_id: 'no', value: 'no', text: 'No', asked }],
      ['messages', { text: 'No', button: { payload: 'no', text: 'No' }, asked }],
    ] as const) {
      const late = await red.admin('POST', `/channel-sessions/test-sessions/${session.id}/${route}`, body);
      should(late.status).equal(409, route);
      should(late.body).containEql({ accepted: false, stale: true });
      should(late.body.error).equal('That button belongs to a question already answered; only the buttons of the question now waiting answer it');
    }
    const now = (await red.admin('GET', `/channel-sessions/sessions/${session.id}`)).body;
    should(now.state).equal('waiting');
    should(now.waitingAt.nodeId).equal('tqsecond');
    should(now.vars).not.have.property('second');
    // A click on the question now waiting is taken.
    const taken = await red.admin('POST', `/channel-sessions/test-sessions/${session.id}/actions`, {
      action_id: 'why',
      value: 'because',
      text: 'Because',
      asked: askedAt(now, 'Why?'),
    });
    should(taken.status).equal(200, taken.text);
    should(taken.body.state).equal('completed');
  });
});
