import type { RED, RedNode } from './red';

/**
 * Whether a start's or Task's Environment property names a config node of the kind it needs.
 * Another kind gets there when two imported flows shared an id, or a flow was edited by hand; the
 * node must then neither serve nor post through it, and the deploy says so: a red status and an
 * error line. An id that names no deployed node is left to the caller (nothing to compare).
 */
export function environmentOfKind(red: RED, node: RedNode, id: string | undefined, expectedType: string): boolean {
  if (!id) return true;
  const env = red.nodes.getNode(id) as { type?: string; name?: string } | null | undefined;
  if (!env?.type || env.type === expectedType) return true;
  node.status({ fill: 'red', shape: 'ring', text: `wrong Environment: a ${env.type}` });
  node.error(`Environment "${env.name || id}" is a ${env.type}, but this node needs a ${expectedType}: `
    + 'select one of that kind in the node and deploy again. Until then it uses none.');
  return false;
}
