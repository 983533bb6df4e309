import type { RED, RedNode } from '../model/red';
import { runtimeText } from '../model/texts';

export type NodeStatus = { fill: string; shape: string; text: string };

/**
 * Whether a start's or Task's Environment property names a config node of the kind it needs.
 * Another kind gets there when two imported flows shared an id, or a flow was edited by hand: the
 * deploy says so with a red status and an error line, and the status it set is returned (undefined
 * when the kind is right, or when the id names no deployed node: nothing to compare).
 */
export function wrongEnvironmentKind(red: RED, node: RedNode, id: string | undefined, expectedType: string): NodeStatus | undefined {
  if (!id) return undefined;
  const env = red.nodes.getNode(id) as { type?: string; name?: string } | null | undefined;
  if (!env?.type || env.type === expectedType) return undefined;
  const status = { fill: 'red', shape: 'ring', text: runtimeText(red, 'core', 'runtime.status.wrongEnvironment', { type: env.type }) };
  node.status(status);
  node.error(runtimeText(red, 'core', 'runtime.log.wrongEnvironment', { name: env.name || id, type: env.type, expected: expectedType }));
  return status;
}
