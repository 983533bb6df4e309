import { engineFor } from '../engine/engine';
import { wrongEnvironmentKind, type NodeStatus } from './environment-kind';
import type { RED, RedNode } from '../model/red';
import type { StartKind } from '../engine/starts';
import { runtimeText } from '../model/texts';

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
  binding: {
    environment?: string;
    /** The config node type `environment` must have (a channel start's own module's Environment). */
    environmentType?: string;
    serves?: Record<string, string>;
    /** The config node type each `serves` entry must have, by module key. */
    servesTypes?: Record<string, string>;
  },
): void {
  const engine = engineFor(red);
  // An Environment of the wrong kind is never served: the start behaves as if none were selected,
  // and the deploy says so (red status, error line).
  const wrong: NodeStatus[] = [];
  const ofKind = (id: string | undefined, type: string | undefined) => {
    const status = type ? wrongEnvironmentKind(red, node, id, type) : undefined;
    if (status) wrong.push(status);
    return !status;
  };
  const environment = ofKind(binding.environment, binding.environmentType) ? binding.environment || undefined : undefined;
  const serves = binding.serves && Object.fromEntries(Object.entries(binding.serves).filter(([moduleKey, id]) => ofKind(id, binding.servesTypes?.[moduleKey])));
  engine.registerStart({
    node,
    kind,
    environment,
    serves,
    variable: bareVariable(config.variable) || 'variable',
    testData: parseTestData(config.testData),
  });
  if (kind.channel && !binding.environment) {
    node.status({ fill: 'red', shape: 'ring', text: runtimeText(red, 'core', 'runtime.status.noEnvironment') });
  }
  // A shared Start that still serves another Environment gets "serves ..." from the engine after
  // the deploy; the red status is the one to keep.
  const keepSaying = () => node.status(wrong[0]);
  if (wrong.length) red.events.on('flows:started', keepSaying);
  node.on('close', (_removed, done) => {
    if (wrong.length) red.events.removeListener('flows:started', keepSaying);
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
