import should from 'should';
import { node, tab } from '../harness/flows';
import {
  helper, load, logOf, messagesOf, nextMessage, reply, sessionDetail, startTestSession, statusMatching, statusesOf,
} from '../harness/helper';

/** The core node set in-process: the shared Start and the standard Tasks on the Test chat's Chat Channel. */
describe('core nodes (node-red-node-test-helper)', function () {
  const teamchatEnv = {
    id: 'envT', type: 'teamchat-environment', name: 'Help desk', sessionMode: 'PerThread', apiUrl: 'http://127.0.0.1:9/api/',
  };
  const credentials = { envT: { botToken: 'xoxb-node-test', signingSecret: 'node-test-secret', token: 'node-test-token' } };

  afterEach(async function () {
    await helper.unload();
  });

  describe('session-start', function () {
    it('loads with the Environment it serves and its credentials, and says in its status that it serves it', async function () {
      await load([
        tab('t1'), teamchatEnv,
        node('session-start', 's1', 't1', { teamchat: 'envT', testData: { text: 'hi' } }, [['h1']]),
        node('helper', 'h1', 't1'),
      ], credentials);
      should(helper.getNode('s1')).be.an.Object().with.property('type', 'session-start');
      should(helper.getNode('envT').credentials).eql(credentials.envT);
      const status = await statusMatching('s1', /serves/);
      should(status).eql({ fill: 'green', shape: 'ring', text: 'serves Help desk' });
    });

    it('sends a token on its output when the Test chat starts a Session, the test data text as msg.payload', async function () {
      await load([
        tab('t1'), node('session-start', 's1', 't1', { testData: { text: 'hi there' } }, [['h1']]), node('helper', 'h1', 't1'),
      ]);
      const arrived = nextMessage('h1');
      const session = await startTestSession('s1');
      const msg = await arrived;
      should(msg.session).eql({ id: session.id, channel: 'Chat', environment: '', process: 't1', isTest: true });
      should(msg.payload).equal('hi there');
      should(msg.vars.execution).have.property('channel', 'Chat');
    });
  });

  describe('output-task', function () {
    it('says its text with placeholders from msg.vars and sends the token on output 1', async function () {
      await load([
        tab('t1'),
        node('session-start', 's1', 't1', { testData: { text: 'hi' } }, [['o1']]),
        node('output-task', 'o1', 't1', { text: 'Hello on {execution.channel}' }, [['h1'], ['h2']]),
        node('helper', 'h1', 't1'), node('helper', 'h2', 't1'),
      ]);
      const done = nextMessage('h1');
      const session = await startTestSession('s1');
      should((await done).session.id).equal(session.id);
      const lines = (await sessionDetail(session.id)).transcript.map((l: any) => l.text);
      should(lines).containEql('Hello on Chat');
    });

    it('takes its error branch with msg.error when an Attachment names no file, and shows the code', async function () {
      await load([
        tab('t1'),
        node('session-start', 's1', 't1', { testData: { text: 'hi' } }, [['o1']]),
        node('output-task', 'o1', 't1', { text: 'Here', attachments: 'ref-session:nothing' }, [['h1'], ['h2']]),
        node('helper', 'h1', 't1'), node('helper', 'h2', 't1'),
      ]);
      const failed = nextMessage('h2');
      await startTestSession('s1');
      const msg = await failed;
      should(msg.error).have.properties({ code: 3005, name: 'TaskInvalidData' });
      should(statusesOf('o1').pop()).eql({ fill: 'red', shape: 'dot', text: '3005 TaskInvalidData' });
    });

    it('refuses a message without a Session token: 4012 in its status and to a Catch node, nothing sent', async function () {
      await load([
        tab('t1'),
        node('output-task', 'o1', 't1', { text: 'Hello' }, [['h1'], ['h2']]),
        node('catch', 'c1', 't1', { scope: null, uncaught: false }, [['h3']]),
        node('helper', 'h1', 't1'), node('helper', 'h2', 't1'), node('helper', 'h3', 't1'),
      ]);
      helper.getNode('o1').receive({ payload: 'no session' });
      const msg = await nextMessage('h3');
      should(msg.error.message).match(/4012.*needs a Session token/);
      should(statusesOf('o1').pop()).eql({ fill: 'red', shape: 'ring', text: '4012 ModuleInvalidData' });
      should(messagesOf('h1').length + messagesOf('h2').length).equal(0);
    });
  });

  describe('input-task', function () {
    const flow = (props: Record<string, unknown>) => [
      tab('t1'),
      node('session-start', 's1', 't1', { testData: { text: 'hi' } }, [['i1']]),
      node('input-task', 'i1', 't1', { prompt: 'Your name?', ...props }, [['h1'], ['h2'], ['h3']]),
      node('helper', 'h1', 't1'), node('helper', 'h2', 't1'), node('helper', 'h3', 't1'),
    ];

    it('asks its prompt, shows how many Sessions wait there, and sends the reply on output 1 in its Store variable', async function () {
      await load(flow({ resultVariable: '{name}' }));
      const session = await startTestSession('s1');
      should(session.state).equal('waiting');
      should(session.transcript.map((l: any) => l.text)).containEql('Your name?');
      await statusMatching('i1', /^1 waiting$/);
      const answered = nextMessage('h1');
      await reply(session.id, 'Ada');
      const msg = await answered;
      should(msg.vars.name).equal('Ada', 'braces typed around the Store variable are dropped');
      should(msg.payload).equal('Ada');
    });

    it('takes its error branch with 3005 when Store result in is empty', async function () {
      await load(flow({ resultVariable: '' }));
      const failed = nextMessage('h2');
      await startTestSession('s1');
      const msg = await failed;
      should(msg.error).have.properties({ code: 3005 });
      should(msg.error.message).match(/Store result in is empty/);
    });

    it('sends the token on output 3 ("no reply") when its timeout passes', async function () {
      await load(flow({ resultVariable: 'name', timeout: 0.2 }));
      const noReply = nextMessage('h3');
      const session = await startTestSession('s1');
      should((await noReply).session.id).equal(session.id);
    });
  });

  describe('end-task', function () {
    it('completes the Session and sends nothing on', async function () {
      await load([
        tab('t1'),
        node('session-start', 's1', 't1', { testData: { text: 'hi' } }, [['e1']]),
        node('end-task', 'e1', 't1', {}),
      ]);
      const session = await startTestSession('s1');
      should(session.state).equal('completed');
      should(helper.getNode('e1').wires).eql([]);
    });

    it('refuses a message without a Session token with 4012 in the log', async function () {
      await load([tab('t1'), node('end-task', 'e1', 't1', {})]);
      helper.getNode('e1').receive({ payload: 'x' });
      await statusMatching('e1', /^4012 /);
      should(logOf('e1', 'error').join('\n')).match(/4012 ModuleInvalidData: end-task needs a Session token/);
    });
  });
});
