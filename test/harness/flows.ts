/** Small builders for flow JSON as the editor would deploy it. */
export type FlowNode = Record<string, unknown> & { id: string; type: string };

export function tab(id: string, label = id): FlowNode {
  return { id, type: 'tab', label, disabled: false, info: '' };
}

let counter = 0;
export function uid(prefix = 'n'): string {
  counter += 1;
  return `${prefix}${process.pid.toString(36)}${counter.toString(36)}`;
}

/** A node on tab `z`, wired output by output: `wires[i]` lists the ids output i goes to. */
export function node(type: string, id: string, z: string, props: Record<string, unknown> = {}, wires: string[][] = []): FlowNode {
  return { id, type, z, x: 100, y: 100, wires, ...props };
}

/** A chain of nodes where output 1 of each goes to the next. */
export function chain(z: string, specs: Array<[string, string, Record<string, unknown>?]>, extraWires: Record<string, string[][]> = {}): FlowNode[] {
  return specs.map(([type, id, props], i) => {
    const next = specs[i + 1]?.[1];
    const base: string[][] = type === 'end-task' ? [] : [next ? [next] : []];
    const wires = extraWires[id] ?? base;
    return node(type, id, z, props ?? {}, wires);
  });
}
