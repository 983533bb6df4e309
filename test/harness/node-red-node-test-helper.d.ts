/**
 * The part of node-red-node-test-helper the tests use. @types/node-red-node-test-helper pulls in
 * superagent's DOM typings, which change `fetch`'s types for the whole compilation (src/ too).
 */
declare module 'node-red-node-test-helper' {
  type FlowItem = { id: string; type: string; [property: string]: unknown };
  type NodeModule = (red: any) => unknown;
  interface NodeTestHelper {
    init(runtimePath: string, userSettings?: Record<string, unknown>): void;
    settings(userSettings?: Record<string, unknown>): Record<string, unknown>;
    load(nodes: NodeModule | NodeModule[], flow: FlowItem[], credentials?: Record<string, Record<string, string>>): Promise<void>;
    setFlows(flow: FlowItem[], type?: 'full' | 'flows' | 'nodes', credentials?: Record<string, Record<string, string>>): Promise<void>;
    unload(): Promise<void>;
    getNode(id: string): any;
    /** supertest on the runtime's httpAdmin app. */
    request(): any;
    /** A sinon spy on the runtime log. */
    log(): any;
    /** The runtime's credentials module (what each type declared at registerType). */
    credentials: { getDefinition(type: string): Record<string, { type: string }> | undefined };
  }
  const helper: NodeTestHelper;
  export = helper;
}
