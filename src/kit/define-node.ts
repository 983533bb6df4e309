import type { RED, RedNode } from '../model/red';

/** Registers a node type whose constructor only creates the node and hands its config over. */
export function defineNode(red: RED, type: string, setUp: (node: RedNode, config: any) => void, options?: object): void {
  red.nodes.registerType(
    type,
    function (this: RedNode, config: any) {
      red.nodes.createNode(this, config);
      setUp(this, config);
    },
    options,
  );
}
