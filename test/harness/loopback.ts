import { join } from 'node:path';
import { NodeRed, REPO_ROOT, type StartOptions } from './node-red';
import { node, tab, type FlowNode } from './flows';

/** Node-RED with the loopback test Channel loaded beside the package (test/fixtures/loopback-channel). */
export function startWithLoopback(options: StartOptions = {}): Promise<NodeRed> {
  return NodeRed.start({
    ...options,
    settings: { nodesDir: [join(REPO_ROOT, 'test', 'fixtures', 'loopback-channel')], ...options.settings },
  });
}

export function loopbackEnvironment(id: string, props: Record<string, unknown> = {}): FlowNode {
  return { id, type: 'loopback-environment', name: `${id} env`, ...props };
}

/**
 * A Process: loopback-start -> Output (echo) -> Input (loop) -> Output -> End, with ids prefixed.
 * `start` 'loopback-other-start' serves the LoopbackOther Channel instead (messages sent with that channel).
 */
export function echoProcess(z: string, env: string, label = z, start: 'loopback-start' | 'loopback-other-start' = 'loopback-start'): FlowNode[] {
  return [
    tab(z, label),
    node(start, `${z}-start`, z, { environment: env, variable: 'loop' }, [[`${z}-hello`]]),
    node('output-task', `${z}-hello`, z, { text: 'hello {loop.text}' }, [[`${z}-ask`], []]),
    node('input-task', `${z}-ask`, z, { prompt: 'next?', resultVariable: 'answer' }, [[`${z}-reply`], []]),
    node('output-task', `${z}-reply`, z, { text: 'got {answer}' }, [[`${z}-ask`], []]),
  ];
}

export async function send(red: NodeRed, env: string, key: string, text: string, channel?: string) {
  const res = await red.request('POST', `/loopback/${env}/${key}`, { text, ...(channel ? { channel } : {}) });
  if (res.status !== 200) throw new Error(`loopback ${res.status} ${res.text}`);
  return res.body as { kind: string; sessionId: string | null; reason: string | null };
}

export async function outbox(red: NodeRed, key: string): Promise<{ said: string[]; arrived: string[] }> {
  return (await red.request('GET', `/loopback-outbox/${key}`)).body;
}
