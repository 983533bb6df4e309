import should from 'should';
import { FakeSlack } from '../fakes/slack-api';
import { node, tab } from '../harness/flows';
import {
  helper, load, logOf, messagesOf, nextMessage, reply, sessionDetail, startTestSession, statusMatching, statusesOf,
} from '../harness/helper';

/** The team-chat node set in-process, posting to the fake Slack Web API through the Environment's apiUrl. */
describe('team-chat nodes (node-red-node-test-helper)', function () {
  let slack: FakeSlack;
  const credentials = { envT: { botToken: 'xoxb-test_bot_token', signingSecret: 'node-test-secret', token: 'tcNodeToken0123456789ab' } };
  const env = (props: Record<string, unknown> = {}) => ({
    id: 'envT', type: 'teamchat-environment', name: 'Help desk', sessionMode: 'PerThread', useThreads: true,
    startFromDirect: true, startFromMention: true, startFromChannel: false, defaultChannel: 'C0ALERTS', apiUrl: slack.apiUrl, ...props,
  });

  before(async function () {
    slack = await FakeSlack.start();
  });
  after(async function () {
    await slack?.close();
  });
  afterEach(async function () {
    await helper.unload();
    slack.reset();
  });

  describe('teamchat-environment', function () {
    it('loads with its credentials and logs the Event, Interactivity and Start URLs with its token', async function () {
      await load([env({ publicBaseUrl: 'https://bots.example.com' })], credentials);
      should(helper.getNode('envT').credentials).eql(credentials.envT);
      should(logOf('envT', 'info')).eql([
        'Event URL: https://bots.example.com/TeamChat/event/tcNodeToken0123456789ab',
        'Interactivity URL: https://bots.example.com/TeamChat/interact/tcNodeToken0123456789ab',
        'Start URL: https://bots.example.com/TeamChat/start/tcNodeToken0123456789ab',
      ]);
      should(logOf('envT', 'warn')).eql([]);
    });

    it('warns, without failing, for each credential it lacks', async function () {
      await load([env()], {});
      const warnings = logOf('envT', 'warn').join('\n');
      should(warnings).match(/No token: open this Environment in the editor/);
      should(warnings).containEql(
        "Tasks that post to Slack need the Bot Token (without it they stop with 4008); the Event URL needs the Signing Secret to take Slack's requests (until then it refuses every one); the Test chat plays it without them",
      );
    });
  });

  describe('teamchat-start', function () {
    it('shows the Environment it serves, or that none is selected', async function () {
      await load([
        tab('t1'), env(),
        node('teamchat-start', 'ts1', 't1', { environment: 'envT', variable: 'teamchat' }, [['h1']]),
        tab('t2'), node('teamchat-start', 'ts2', 't2', { environment: '', variable: 'teamchat' }, [[]]),
        node('helper', 'h1', 't1'),
      ], credentials);
      should(await statusMatching('ts1', /serves/)).eql({ fill: 'green', shape: 'ring', text: 'serves Help desk' });
      should(statusesOf('ts2')).containEql({ fill: 'red', shape: 'ring', text: 'no Environment selected' });
    });

    it('sends {teamchat} from the test data in a Test chat Session, or asks for the opening message', async function () {
      await load([
        tab('t1'), env(),
        node('teamchat-start', 'ts1', 't1', { environment: 'envT', variable: '{chat}', testData: { text: 'hello', from: 'U0ADA' } }, [['h1']]),
        tab('t2'), node('teamchat-start', 'ts2', 't2', { environment: 'envT', variable: 'teamchat', testData: {} }, [['h2']]),
        node('helper', 'h1', 't1'), node('helper', 'h2', 't2'),
      ], credentials);
      await startTestSession('ts1');
      const msg = await nextMessage('h1');
      should(msg.vars.chat).have.properties({ text: 'hello', from: 'U0ADA', to: 'D0TESTCHAT', channel: 'Chat', isTest: true });
      should(msg.payload).equal('hello');
      const asking = await startTestSession('ts2');
      should(asking.state).equal('waiting');
      should(messagesOf('h2')).eql([]);
      await reply(asking.id, 'typed opening');
      should((await nextMessage('h2')).vars.teamchat.text).equal('typed opening');
    });
  });

  describe('teamchat-block-message', function () {
    const flow = (props: Record<string, unknown>) => [
      tab('t1'), env(),
      node('session-start', 's1', 't1', { teamchat: 'envT', testData: { text: 'hi' } }, [['b1']]),
      node('teamchat-block-message', 'b1', 't1', { environment: 'envT', channel: '', notificationText: 'Card {payload}', ...props }, [['h1'], ['h2']]),
      node('helper', 'h1', 't1'), node('helper', 'h2', 't1'),
    ];

    it('posts its blocks to the Default Channel, shows where, and sends the token on output 1', async function () {
      await load(flow({ blocks: '[{"type":"section","text":{"type":"mrkdwn","text":"Hi from {execution.channel}"}}]' }), credentials);
      const session = await startTestSession('s1');
      should((await nextMessage('h1')).session.id).equal(session.id);
      const [post] = slack.callsOf('chat.postMessage');
      should(post.token).equal('xoxb-test_bot_token');
      should(post.body).have.properties({ channel: 'C0ALERTS' });
      should(post.body.blocks).eql([{ type: 'section', text: { type: 'mrkdwn', text: 'Hi from Chat' } }]);
      should(statusesOf('b1').pop()).eql({ fill: 'green', shape: 'dot', text: 'posted to C0ALERTS' });
    });

    it('takes its error branch with 3005 for Block Kit JSON that does not parse, posting nothing', async function () {
      await load(flow({ blocks: '[{"type": ' }), credentials);
      await startTestSession('s1');
      const msg = await nextMessage('h2');
      should(msg.error.code).equal(3005);
      should(msg.error.message).match(/Block Kit JSON is not valid JSON/);
      should(slack.callsOf('chat.postMessage')).eql([]);
    });
  });

  describe('teamchat-notification', function () {
    const flow = (props: Record<string, unknown>) => [
      tab('t1'), env(),
      node('teamchat-notification', 'n1', 't1', { environment: 'envT', channel: 'C0OPS', message: 'Disk at {payload}%', ...props }, [['h1'], ['h2']]),
      node('helper', 'h1', 't1'), node('helper', 'h2', 't1'),
    ];

    it('posts from a flow without a Session, placeholders from the message, and sends on output 1', async function () {
      await load(flow({}), credentials);
      helper.getNode('n1').receive({ payload: 93 });
      should((await nextMessage('h1')).payload).equal(93);
      const [post] = slack.callsOf('chat.postMessage');
      should(post.body).have.properties({ channel: 'C0OPS', text: 'Disk at 93%' });
      should(statusesOf('n1').pop()).eql({ fill: 'green', shape: 'dot', text: 'posted to C0OPS' });
    });

    it('takes its error branch with 3005 when the Message is empty, and 4008 without a Bot Token', async function () {
      await load(flow({ message: '  ' }), credentials);
      helper.getNode('n1').receive({ payload: 1 });
      should((await nextMessage('h2')).error).have.properties({ code: 3005, message: 'Message is empty' });
      await helper.unload();
      await load(flow({}), { envT: { signingSecret: 'node-test-secret', token: 'tcNodeToken0123456789ab' } });
      helper.getNode('n1').receive({ payload: 1 });
      should((await nextMessage('h2')).error.code).equal(4008);
      should(statusesOf('n1').pop()).eql({ fill: 'red', shape: 'dot', text: '4008 ModuleMissingConfiguration' });
      should(slack.callsOf('chat.postMessage')).eql([]);
    });
  });

  describe('teamchat-post-message (retired)', function () {
    it('loads so old flows still deploy, says to replace it, and refuses every message', async function () {
      await load([
        tab('t1'), node('teamchat-post-message', 'p1', 't1', {}, []),
        node('catch', 'c1', 't1', { scope: null, uncaught: false }, [['h1']]), node('helper', 'h1', 't1'),
      ]);
      should(statusesOf('p1')).eql([{ fill: 'red', shape: 'ring', text: 'retired: replace with TeamChatNotification' }]);
      should(logOf('p1', 'warn').join('\n')).match(/retired and posts nothing: replace it with a TeamChatNotification/);
      helper.getNode('p1').receive({ payload: 'x' });
      should((await nextMessage('h1')).error.message).match(/retired/);
      should(slack.callsOf('chat.postMessage')).eql([]);
    });
  });

  describe('teamchat-status', function () {
    const voiceCredentials = { envV: { accountSid: 'AC00000000000000000000000000000001', authToken: 'voice-auth-token', webhookSigningSecret: '', token: 'statusVoiceToken0123456' } };
    const flow = () => [
      tab('t1'),
      env(),
      { id: 'envV', type: 'telco-voice-environment', name: 'Line' },
      node('teamchat-start', 's1', 't1', { environment: 'envT', variable: 'teamchat', testData: { text: 'rates' } }, [['st']]),
      node('telco-call-start', 'c1', 't1', { environment: 'envV', variable: 'call', testData: { from: '+14155550123' } }, [['st']]),
      node('teamchat-status', 'st', 't1', { status: 'is looking up {teamchat.text}…', loadingMessages: 'Reading\nWriting' }, [['h1', 'ask'], ['h2']]),
      node('input-task', 'ask', 't1', { prompt: 'Anything else?', resultVariable: 'more' }, [[], []]),
      node('helper', 'h1', 't1'),
      node('helper', 'h2', 't1'),
    ];

    it('shows a typing line in the Test chat (as Chat and as played Slack), and calls no Slack', async function () {
      await load(flow(), { ...credentials, ...voiceCredentials });
      for (const mode of ['chat', 'channel'] as const) {
        const session = await startTestSession('s1', undefined, mode);
        should((await nextMessage('h1')).session.id).equal(session.id);
        const lines = (await sessionDetail(session.id)).transcript.map((l: any) => [l.from, l.kind, l.text]);
        should(lines).containEql(['bot', 'status', 'is looking up rates…']);
      }
      should(slack.callsOf('assistant.threads.setStatus')).eql([]);
    });

    it('does nothing on another Channel (a call) and goes on from output 1', async function () {
      await load(flow(), { ...credentials, ...voiceCredentials });
      const session = await startTestSession('c1', undefined, 'channel');
      should(session.channel).equal('TelcoVoice');
      should((await nextMessage('h1')).session.id).equal(session.id);
      should((await sessionDetail(session.id)).transcript.filter((l: any) => l.kind === 'status')).eql([]);
      should(messagesOf('h2')).eql([]);
    });
  });
});
