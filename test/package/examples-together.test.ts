import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import should from 'should';
import { watchStatuses } from '../harness/comms';
import { node, tab } from '../harness/flows';
import { NodeRed, REPO_ROOT } from '../harness/node-red';

const EXAMPLES_DIR = join(REPO_ROOT, 'examples');
type FlowNode = { id: string; type: string; z?: string; environment?: string; [k: string]: unknown };
const examples = (): Array<{ file: string; flow: FlowNode[] }> =>
  readdirSync(EXAMPLES_DIR)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((file) => ({ file, flow: JSON.parse(readFileSync(join(EXAMPLES_DIR, file), 'utf8')) }));

/** The Environment kind each binding property needs (the editor's `type` of that property). */
const NEEDS: Record<string, string> = {
  'teamchat-start': 'teamchat-environment',
  'teamchat-block-message': 'teamchat-environment',
  'teamchat-notification': 'teamchat-environment',
  'telco-call-start': 'telco-voice-environment',
  'telco-sms-start': 'telco-messaging-environment',
  'telco-messenger-start': 'telco-messaging-environment',
  'telco-message-out': 'telco-messaging-environment',
  'teamchat-open': 'teamchat-environment',
};

/**
 * A user imports every example into one Node-RED: no two share an id, so each start keeps its own
 * Environment. A start or Task bound to another kind of Environment says so when deployed.
 */
describe('the examples imported together', function () {
  let red: NodeRed;
  before(async function () {
    red = await NodeRed.start();
  });
  after(async function () {
    await red?.close();
  });

  it('give every node an id no other example uses', function () {
    const owner = new Map<string, string>();
    const shared: string[] = [];
    for (const { file, flow } of examples()) {
      for (const n of flow) {
        if (owner.has(n.id)) shared.push(`${n.id} (${n.type}) in "${owner.get(n.id)}" and "${file}"`);
        else owner.set(n.id, file);
      }
    }
    should(shared).eql([]);
  });

  it('deploy side by side with each start and Task on an Environment of its own kind, and no error', async function () {
    const all = examples().flatMap((e) => e.flow);
    const byId = new Map(all.map((n) => [n.id, n]));
    const mark = red.logs.length;
    await red.deploy(all);
    for (const n of all) {
      if (NEEDS[n.type] && n.environment) should(byId.get(n.environment)?.type).equal(NEEDS[n.type], `${n.type} ${n.id}`);
    }
    const processes = (await red.admin('GET', '/channel-sessions/processes')).body as Array<{ starts: Array<{ id: string; environment: string | null }> }>;
    const starts = processes.flatMap((p) => p.starts);
    for (const n of all.filter((x) => /-start$/.test(x.type) && x.environment)) {
      should(starts.find((s) => s.id === n.id)?.environment).equal(n.environment, `${n.type} ${n.id} serves its Environment`);
    }
    should(red.logs.slice(mark).filter((l) => /\[error\]/.test(l))).eql([]);
  });

  it('shows a red status and logs an error when a start or Task is bound to an Environment of another kind', async function () {
    const statuses = await watchStatuses(red);
    const mark = red.logs.length;
    await red.deploy([
      {
        id: 'wkSlack',
        type: 'teamchat-environment',
        name: 'Workspace',
        credentials: { botToken: 'xoxb-x', signingSecret: 's', token: 'wkSlackToken000000000000' },
      },
      {
        id: 'wkPhone',
        type: 'telco-voice-environment',
        name: 'Phone line',
        credentials: { accountSid: 'AC' + '0'.repeat(32), authToken: 't', token: 'wkPhoneToken000000000000' },
      },
      tab('wkP', 'Wrong kinds'),
      node('telco-sms-start', 'wkSms', 'wkP', { environment: 'wkSlack', variable: 'message' }, [[]]),
      node('session-start', 'wkShared', 'wkP', { messaging: 'wkPhone', testData: { text: 'hi' } }, [['wkEnd']]),
      node('teamchat-notification', 'wkNotify', 'wkP', { environment: 'wkPhone', channel: 'C1', message: 'hello' }, [[], []]),
      node('end-task', 'wkEnd', 'wkP'),
    ]);
    // The engine reports what each start serves right after the deploy; a misbound start keeps its red status.
    await new Promise((r) => setTimeout(r, 500));
    for (const [id, kind] of [
      ['wkSms', 'teamchat-environment'],
      ['wkShared', 'telco-voice-environment'],
      ['wkNotify', 'telco-voice-environment'],
    ]) {
      should(statuses.get(id)).containEql({ fill: 'red', text: `wrong Environment: a ${kind}` });
    }
    statuses.close();
    const errors = red.logs.slice(mark).filter((l) => /\[error\]/.test(l));
    should(errors.length).equal(3, errors.join('\n'));
    should(errors.find((l) => l.includes('[telco-sms-start:')) ?? '').match(
      /Environment "Workspace" is a teamchat-environment, but this node needs a telco-messaging-environment/,
    );
    // The misbound start serves nothing: its test Session belongs to no Environment.
    const processes = (await red.admin('GET', '/channel-sessions/processes')).body as Array<{ starts: Array<{ id: string; environment: string | null }> }>;
    should(processes.flatMap((p) => p.starts).find((s) => s.id === 'wkSms')?.environment).equal(null);
  });
});
