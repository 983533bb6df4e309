import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import helper from 'node-red-node-test-helper';
import { NODE_RED_DIR, REPO_ROOT, eventually } from './node-red';

/**
 * node-red-node-test-helper on the Node-RED under test (the devDependency, or CS_NODE_RED_DIR),
 * loading the package's built node sets from dist/ into this process.
 *
 * The package keeps one engine per runtime, found by the runtime's event bus, which the helper
 * shares across loads: every file using this harness in a process shares that engine, so they
 * share one user dir and one set of settings (mocha reuses its worker processes from file to file).
 */
helper.init(require.resolve(NODE_RED_DIR));
const userDir = mkdtempSync(join(tmpdir(), 'cs-helper-'));
process.once('exit', () => rmSync(userDir, { recursive: true, force: true }));
helper.settings({
  userDir,
  channelSessions: { fileStorage: 'inline', idleTimeout: { Chat: 3600 }, sweepInterval: 60 },
});

// The helper's node API leaves out `hooks`; Node-RED's own runtime hands nodes the hooks of
// @node-red/util, the module its flows call preDeliver/onReceive/onComplete on. Give them that.
const nodeRedUtil = require(require.resolve('@node-red/util', { paths: [NODE_RED_DIR] }));

type NodeModule = (red: any) => unknown;
function withHooks(module: NodeModule): NodeModule {
  return (red) => {
    red.hooks ??= nodeRedUtil.hooks;
    return module(red);
  };
}

/** The node sets named in package.json `node-red.nodes`, as Node-RED would load them. */
export const nodeSets: Record<string, NodeModule> = Object.fromEntries(
  Object.entries(require(join(REPO_ROOT, 'package.json'))['node-red'].nodes as Record<string, string>).map(([name, file]) => [
    name,
    withHooks(require(join(REPO_ROOT, file))),
  ]),
);

export const allNodeSets = Object.values(nodeSets);

export { helper };

export type Status = { fill?: string; shape?: string; text?: string };

/** Every status a node has shown since the flow loaded, oldest first (the helper spies on Node.prototype.status). */
export function statusesOf(id: string): Status[] {
  const node = helper.getNode(id);
  return node.status
    .getCalls()
    .filter((c: any) => c.thisValue === node)
    .map((c: any) => c.args[0]);
}

/** The node's latest status, once one matches `text` (status may follow the deploy by a tick). */
export async function statusMatching(id: string, text: RegExp, timeoutMs = 3000): Promise<Status> {
  return eventually(
    () =>
      statusesOf(id)
        .filter((s) => text.test(s.text ?? ''))
        .pop(),
    timeoutMs,
    `a status of ${id} matching ${text}`,
  );
}

/** What a node wrote to the Node-RED log at a level ('warn', 'info', 'error'). */
export function logOf(id: string, level: 'error' | 'warn' | 'info'): string[] {
  const spy = helper.log();
  const wanted = spy[level.toUpperCase()];
  return spy
    .getCalls()
    .map((c: any) => c.args[0])
    .filter((e: any) => e?.id === id && e.level === wanted)
    .map((e: any) => String(e.msg));
}

const received = new Map<string, { messages: any[]; taken: number; wake?: () => void }>();

/** Test chat Sessions started through startTestSession that may still be live. */
const startedSessions = new Set<string>();

/**
 * Ends, as the Sessions view's End button does, the Test chat Sessions earlier tests left live. The
 * files in a process share the Test chat's store, and a Session an earlier test left waiting at a
 * node id the next flow reuses would show up in that node's "N waiting", half a second after the
 * deploy, over whatever status the test is looking at.
 */
async function endStartedSessions(): Promise<void> {
  for (const id of startedSessions) {
    const res = await helper.request().delete(`/channel-sessions/sessions/${id}`);
    // 404: the Session already ended.
    if (res.status !== 200 && res.status !== 404) throw new Error(`ending test session ${id}: ${res.status} ${JSON.stringify(res.body)}`);
  }
  startedSessions.clear();
}

/**
 * Loads flows with every node set of the package. Each `helper` node records what reaches it and
 * calls done(), as a real node does: the engine follows a Session's token through Node-RED's
 * message hooks, and a token that is never completed keeps its Session running.
 */
export async function load(
  flow: Array<{ id: string; type: string; [k: string]: unknown }>,
  credentials?: Record<string, Record<string, string>>,
): Promise<void> {
  received.clear();
  await endStartedSessions();
  await helper.load(allNodeSets, flow, credentials);
  for (const n of flow.filter((f) => f.type === 'helper')) {
    const box: { messages: any[]; taken: number; wake?: () => void } = { messages: [], taken: 0 };
    received.set(n.id, box);
    helper.getNode(n.id).on('input', (msg: unknown, _send: unknown, done: () => void) => {
      box.messages.push(msg);
      done();
      box.wake?.();
    });
  }
}

/** Every message a `helper` node has received so far. */
export function messagesOf(id: string): any[] {
  return received.get(id)?.messages ?? [];
}

/** The next message a `helper` node receives (or has received and no test took yet). */
export async function nextMessage(id: string, timeoutMs = 3000): Promise<any> {
  const box = received.get(id);
  if (!box) throw new Error(`${id} is not a helper node of the loaded flow`);
  const deadline = Date.now() + timeoutMs;
  while (box.messages.length <= box.taken) {
    const left = deadline - Date.now();
    if (left <= 0) throw new Error(`no message reached ${id} within ${timeoutMs} ms`);
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, left);
      box.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }
  return box.messages[box.taken++];
}

/**
 * A Test chat Session at a start node, through the editor's admin route (what the sidebar does):
 * on the Chat Channel, or with `mode: 'channel'` playing the start's own Channel.
 */
export async function startTestSession(start: string, testData?: Record<string, unknown>, mode?: 'chat' | 'channel'): Promise<any> {
  const res = await helper
    .request()
    .post('/channel-sessions/test-sessions')
    .send({ start, ...(testData ? { testData } : {}), ...(mode ? { mode } : {}) });
  if (res.status !== 201) throw new Error(`test session at ${start}: ${res.status} ${JSON.stringify(res.body)}`);
  startedSessions.add(res.body.id);
  return res.body;
}

/** A reply typed in the Test chat. */
export async function reply(sessionId: string, text: string): Promise<any> {
  const res = await helper.request().post(`/channel-sessions/test-sessions/${sessionId}/messages`).send({ text });
  if (res.status !== 200) throw new Error(`reply to ${sessionId}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

export async function sessionDetail(id: string): Promise<any> {
  return (await helper.request().get(`/channel-sessions/sessions/${id}`)).body;
}
