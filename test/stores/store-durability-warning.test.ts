import should from 'should';
import { tab, uid } from '../harness/flows';
import { NodeRed } from '../harness/node-red';
import { FakeTwilioMessagingApi } from '../fakes/twilio-messaging-api';
import { ACCOUNT_SID, AUTH_TOKEN, messagingEnvironment } from '../fakes/twilio-messaging-webhooks';

/**
 * An Environment whose Session store is a Node-RED context store that is not durable says at each
 * deploy what a crash loses; one on the durable default says nothing of the kind.
 */
describe('the deploy warning of a Session store that is not durable', function () {
  this.timeout(60000);
  let fake: FakeTwilioMessagingApi;
  let red: NodeRed;

  const expected = {
    envMem:
      'Environment "env envMem": Session store "mem" (memory) keeps Sessions in memory only: a crash or restart loses every conversation in progress and any message not yet handled. Leave Session store empty for the durable default.',
    envFile:
      'Environment "env envFile": Session store "file" (localfilesystem) writes every 30 s: a crash loses up to 30 s of Session changes and any message acknowledged but not yet handled. Leave Session store empty for the durable default.',
    envFileNoCache:
      'Environment "env envFileNoCache": Session store "direct" (localfilesystem) writes on every change, one file per scope: a crash loses any message acknowledged but not yet handled. Leave Session store empty for the durable default.',
    envMissing:
      'Environment "env envMissing": Session store "nosuch" is not in settings.js contextStorage, so Node-RED uses its default context store: Sessions are kept in memory, and a crash loses the conversations in progress and any message not yet handled. Leave Session store empty for the durable default.',
  };

  before(async function () {
    fake = await FakeTwilioMessagingApi.start(ACCOUNT_SID, AUTH_TOKEN);
    red = await NodeRed.start({
      settings: {
        contextStorage: {
          default: { module: 'memory' },
          mem: { module: 'memory' },
          file: { module: 'localfilesystem' },
          direct: { module: 'localfilesystem', config: { cache: false } },
        },
      },
    });
  });
  after(async function () {
    await red?.close();
    await fake?.close();
  });

  function flows(): object[] {
    const z = 'dwTab';
    const env = (id: string, sessionStore: string) => messagingEnvironment(id, `tok-${id}-${uid()}`, fake, red, { sessionStore });
    return [
      tab(z, 'Starts'),
      env('envMem', 'mem'),
      env('envFile', 'file'),
      env('envFileNoCache', 'direct'),
      env('envMissing', 'nosuch'),
      env('envDurable', ''),
      ...['envMem', 'envFile', 'envFileNoCache', 'envMissing', 'envDurable'].map((e) => ({
        id: `dw${e}`,
        type: 'telco-sms-start',
        z,
        environment: e,
        x: 100,
        y: 100,
        wires: [[]],
      })),
    ];
  }

  async function deployAndRead(): Promise<string[]> {
    const from = red.logs.length;
    await red.deploy(flows());
    await new Promise((r) => setTimeout(r, 300));
    return red.logs.slice(from).filter((l) => /\[warn\] \[channel-sessions\] Environment/.test(l));
  }

  it('says what a crash loses, in the words of its kind of store, at the first deploy and at every one after', async function () {
    for (const deploy of ['first', 'second']) {
      const lines = await deployAndRead();
      for (const [env, text] of Object.entries(expected)) {
        should(lines.filter((l) => l.endsWith(`[warn] [channel-sessions] ${text}`)).length).equal(1, `${deploy} deploy, ${env}:\n${lines.join('\n')}`);
      }
      should(lines.filter((l) => /envDurable/.test(l))).eql([], `${deploy} deploy: the durable default warns of nothing`);
      should(lines).have.length(Object.keys(expected).length, lines.join('\n'));
    }
  });
});
