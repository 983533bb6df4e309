import { join } from 'node:path';
import should from 'should';
import { node, tab } from '../harness/flows';
import { runEditorScripts } from '../harness/editor-script';
import { helper, load, logOf, nextMessage, sessionDetail, startTestSession, statusesOf } from '../harness/helper';
import { REPO_ROOT } from '../harness/node-red';

/** teamchat-open in-process: deploy checks, the edit dialog, the error branch, the Test chat. */
describe('Message first node (node-red-node-test-helper)', function () {
  const credentials = { envT: { botToken: 'xoxb-not-used', signingSecret: 'secret', token: 'tcOpenToken0123456789ab', appToken: '' } };
  const env = { id: 'envT', type: 'teamchat-environment', name: 'Team', sessionMode: 'PerThread', useThreads: true };

  afterEach(async function () {
    await helper.unload();
  });

  it('shows red and says so at deploy without an Environment; a message then leaves on output 2 with 4008', async function () {
    await load([tab('t1'), node('teamchat-open', 'o1', 't1', { environment: '' }, [['h1'], ['h2']]), node('helper', 'h1', 't1'), node('helper', 'h2', 't1')]);
    should(statusesOf('o1')).containEql({ fill: 'red', shape: 'ring', text: 'no Environment selected' });
    should(logOf('o1', 'error').join('\n')).match(/no Environment selected/);
    helper.getNode('o1').receive({ user: 'U0ANN' });
    should((await nextMessage('h2')).error).match({ code: 4008 });
  });

  it('sends a message with neither user nor channel to output 2 with 3005, before calling Slack', async function () {
    await load(
      [tab('t1'), env, node('teamchat-open', 'o1', 't1', { environment: 'envT' }, [['h1'], ['h2']]), node('helper', 'h1', 't1'), node('helper', 'h2', 't1')],
      credentials,
    );
    helper.getNode('o1').receive({ payload: 'hi' });
    should((await nextMessage('h2')).error).match({ code: 3005, message: /user \(msg\.user\) and channel \(msg\.channel\) are both empty/ });
  });

  it('is offered as a start in the Test chat: output 1 carries {teamchat} with direction outbound', async function () {
    await load([tab('t1'), env, node('teamchat-open', 'o1', 't1', { environment: 'envT' }, [['h1'], []]), node('helper', 'h1', 't1')], credentials);
    const processes = (await helper.request().get('/channel-sessions/processes')).body;
    should(processes[0].starts.map((s: any) => s.type)).eql(['teamchat-open']);
    const session = await startTestSession('o1', { user: 'U0ANN', text: 'check-in' });
    const msg = await nextMessage('h1');
    should(msg.vars.teamchat).have.properties({ from: 'U0ANN', text: 'check-in', direction: 'outbound', channel: 'Chat', isTest: true });
    should((await sessionDetail(session.id)).history).eql([]);
  });

  it("played on its own Channel in the Test chat, {teamchat}.channel is TeamChatChannel, as a played team-chat start's", async function () {
    await load([tab('t1'), env, node('teamchat-open', 'o1', 't1', { environment: 'envT' }, [['h1'], []]), node('helper', 'h1', 't1')], credentials);
    await startTestSession('o1', { user: 'U0ANN', text: 'check-in' }, 'channel');
    const msg = await nextMessage('h1');
    should(msg.session.channel).equal('TeamChatChannel');
    should(msg.vars.teamchat).have.properties({ channel: 'TeamChatChannel', direction: 'outbound', isTest: true });
  });

  it('the edit dialog asks for an Environment and takes msg.user / msg.channel by default', function () {
    const def = runEditorScripts(join(REPO_ROOT, 'nodes/teamchat.html')).types.get('teamchat-open')!;
    should([def.inputs, def.outputs]).eql([1, 2]);
    const defaults = def.defaults!;
    should([defaults.user.value, defaults.userType.value, defaults.channel.value, defaults.channelType.value, defaults.variable.value]).eql([
      'user',
      'msg',
      'channel',
      'msg',
      'teamchat',
    ]);
    should(defaults.environment).match({ type: 'teamchat-environment', required: true });
    const check = (property: 'user' | 'channel', value: string) => defaults[property].validate!.call({ [`${property}Type`]: 'str' }, value);
    should(check('user', 'U0ANN')).be.true();
    should(check('user', 'ann')).be.false();
    should(check('channel', 'C0TEAM01')).be.true();
  });

  it("the edit dialog takes a channel's name where the runtime does (PerThread with threads), and refuses it elsewhere", function () {
    const environments = {
      threads: { id: 'threads', type: 'teamchat-environment', sessionMode: 'PerThread', useThreads: true },
      flat: { id: 'flat', type: 'teamchat-environment', sessionMode: 'PerThread', useThreads: false },
      perChannel: { id: 'perChannel', type: 'teamchat-environment', sessionMode: 'PerChannel', useThreads: true },
    };
    const channel = runEditorScripts(join(REPO_ROOT, 'nodes/teamchat.html'), environments).types.get('teamchat-open')!.defaults!.channel;
    const check = (environment: string, value: string) => channel.validate!.call({ environment, channelType: 'str' }, value);
    // The runtime posts in #general and takes the id Slack answers (message-first.test.ts).
    should(check('threads', 'general')).be.true();
    should(check('threads', '#general')).be.true();
    should(check('threads', 'two words')).be.false();
    // Keyed by the channel from the start: the runtime refuses a name with 3005.
    should(check('flat', '#general')).be.false();
    should(check('perChannel', '#general')).be.false();
    for (const environment of ['threads', 'flat', 'perChannel']) should(check(environment, 'C0TEAM01')).be.true();
  });
});
