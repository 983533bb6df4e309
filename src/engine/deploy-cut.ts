/**
 * Which nodes a deploy stops, from the runtime's `flows:stopping` event. A full deploy (or a stop,
 * or a change to global config) stops them all; a modified-flows or modified-nodes deploy stops
 * the changed and removed nodes (with modified-flows also the rewired and linked ones) and every
 * node of a flow tab whose own state changed. A step whose token sits in none of them is not cut:
 * it finishes on its own, and its replies are not sent a second time by a re-run.
 */
export type StoppedNodes = 'all' | Set<string>;

interface DeployDiff {
  changed?: string[];
  removed?: string[];
  rewired?: string[];
  linked?: string[];
  added?: string[];
  flowChanged?: string[];
  globalConfigChanged?: boolean;
}

interface StoppingEvent {
  type?: string;
  diff?: DeployDiff;
  config?: { flows?: Record<string, { nodes?: Record<string, unknown> }> };
}

export function nodesStoppedBy(event: StoppingEvent | undefined): StoppedNodes {
  const diff = event?.diff;
  if (!event?.type || event.type === 'full' || !diff || diff.globalConfigChanged) return 'all';
  const stopped = new Set<string>([...(diff.changed ?? []), ...(diff.removed ?? [])]);
  if (event.type === 'flows') for (const id of [...(diff.rewired ?? []), ...(diff.linked ?? [])]) stopped.add(id);
  for (const flowId of [...(diff.flowChanged ?? []), ...(diff.added ?? []), ...(diff.removed ?? [])]) {
    const nodes = event.config?.flows?.[flowId]?.nodes;
    if (!nodes) continue;
    stopped.add(flowId);
    for (const id of Object.keys(nodes)) stopped.add(id);
  }
  return stopped;
}

/**
 * Whether one of the nodes holding a token was stopped. A node inside a subflow has the id of its
 * subflow instance, then `-`, then its own (at any depth), so stopping the instance stops it too.
 */
export function holdsStopped(holding: Iterable<string>, stopped: StoppedNodes): boolean {
  if (stopped === 'all') return true;
  for (const id of holding) {
    if (stopped.has(id)) return true;
    for (let dash = id.indexOf('-'); dash > 0; dash = id.indexOf('-', dash + 1)) {
      if (stopped.has(id.slice(0, dash))) return true;
    }
  }
  return false;
}
