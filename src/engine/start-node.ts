import { engineFor } from './engine';
import type { RED, RedNode } from './red';
import type { StartKind } from './starts';

export interface StartConfig {
  environment?: string;
  variable?: string;
  testData?: unknown;
}

/**
 * Every start node works the same way: it registers with the engine, which runs it when its
 * Process is chosen for an inbound event or a test-chat Session. Modules only describe the kind.
 */
export function setUpStartNode(
  red: RED,
  node: RedNode,
  config: StartConfig,
  kind: StartKind,
  binding: { environment?: string; serves?: Record<string, string> },
): void {
  const engine = engineFor(red);
  engine.registerStart({
    node,
    kind,
    environment: binding.environment || undefined,
    serves: binding.serves,
    variable: bareVariable(config.variable) || 'variable',
    testData: parseTestData(config.testData),
  });
  if (kind.channel && !binding.environment) {
    node.status({ fill: 'red', shape: 'ring', text: 'no Environment selected' });
  }
  node.on('close', (_removed, done) => {
    engine.unregisterStart(node);
    engine.unregisterWaitingNode(node);
    done();
  });
}

/** Store variable fields take a bare name; braces a user typed anyway are dropped. */
export function bareVariable(value: unknown): string {
  return typeof value === 'string' ? value.trim().replace(/^\{\s*|\s*\}$/g, '') : '';
}

function parseTestData(value: unknown): Record<string, unknown> {
  if (typeof value === 'string') {
    try {
      const parsed = JSON.parse(value || '{}');
      return typeof parsed === 'object' && parsed !== null ? parsed : {};
    } catch {
      return {};
    }
  }
  return typeof value === 'object' && value !== null ? { ...(value as Record<string, unknown>) } : {};
}
