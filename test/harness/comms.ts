import type { NodeRed } from './node-red';

/** Node status as the editor sees it: the retained `status/<id>` comms topics. */
export async function watchStatuses(red: NodeRed): Promise<Map<string, { fill?: string; text?: string }> & { close(): void }> {
  const WebSocket = require('ws');
  const ws = new WebSocket(red.url('/comms').replace('http', 'ws'));
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  const statuses = new Map<string, { fill?: string; text?: string }>() as Map<string, { fill?: string; text?: string }> & { close(): void };
  ws.on('message', (raw: Buffer) => {
    for (const m of JSON.parse(raw.toString())) {
      if (typeof m.topic === 'string' && m.topic.startsWith('status/') && m.data?.text) statuses.set(m.topic.slice(7), m.data);
    }
  });
  ws.send(JSON.stringify({ subscribe: 'status/#' }));
  await new Promise((r) => setTimeout(r, 50));
  statuses.close = () => ws.close();
  return statuses;
}
