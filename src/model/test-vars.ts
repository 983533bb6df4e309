/**
 * The `vars` of a start's test data: what an out node's input message would carry as `msg.vars`
 * (the new Session's first variables), so a Process that texts or calls first reads right in the
 * Test chat. A JSON copy: test data is edited in the editor and kept in the flow file.
 */
export function testVars(testData: Record<string, unknown>): Record<string, unknown> | undefined {
  let vars = testData.vars;
  if (typeof vars === 'string') {
    try {
      vars = JSON.parse(vars);
    } catch {
      return undefined;
    }
  }
  if (typeof vars !== 'object' || vars === null || Array.isArray(vars)) return undefined;
  return JSON.parse(JSON.stringify(vars)) as Record<string, unknown>;
}
