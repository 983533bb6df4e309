import { eventually, type NodeRed } from './node-red';
import { node, type FlowNode } from './flows';

/**
 * A way in for call requests: `POST /<path>` with `{ to, vars, topic }` becomes `msg.to`,
 * `msg.vars` and `msg.topic` (as an http in and a change node would set them), answered 200 at once.
 */
export function requestEntry(z: string, id: string, path: string, target: string): FlowNode[] {
  return [
    node('http in', `${id}In`, z, { url: path, method: 'post', upload: false }, [[`${id}Set`, `${id}Ok`]]),
    node('http response', `${id}Ok`, z, { statusCode: '200' }),
    node(
      'change',
      `${id}Set`,
      z,
      {
        rules: [
          { t: 'set', p: 'to', pt: 'msg', to: 'payload.to', tot: 'msg' },
          { t: 'set', p: 'vars', pt: 'msg', to: 'payload.vars', tot: 'msg' },
          { t: 'set', p: 'topic', pt: 'msg', to: 'payload.topic', tot: 'msg' },
        ],
      },
      [[target]],
    ),
  ];
}

/** A function node that logs what reaches it as `<tag> <JSON>` (a warning), for outputs with no Session. */
export function reporter(z: string, id: string, tag: string): FlowNode {
  return node('function', id, z, {
    func: `node.warn(${JSON.stringify(tag)} + ' ' + JSON.stringify({ call: msg.call, error: msg.error, topic: msg.topic, vars: msg.vars, session: msg.session })); return null;`,
    outputs: 0,
  });
}

/** The messages a reporter logged since a mark, parsed. */
export function reported(red: NodeRed, tag: string, mark = 0): any[] {
  const found: any[] = [];
  for (const line of red.logs.slice(mark)) {
    const at = line.indexOf(`${tag} {`);
    if (at >= 0) found.push(JSON.parse(line.slice(at + tag.length + 1)));
  }
  return found;
}

export async function reportedOnce(red: NodeRed, tag: string, mark = 0, timeoutMs = 10000): Promise<any> {
  return eventually(() => reported(red, tag, mark)[0], timeoutMs, `a message logged as ${tag}`);
}

export async function requestCall(red: NodeRed, path: string, body: Record<string, unknown>): Promise<void> {
  const res = await red.request('POST', path, body);
  if (res.status !== 200) throw new Error(`POST ${path}: ${res.status} ${res.text}`);
}
