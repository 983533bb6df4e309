import type { RED, RedNode } from '../model/red';
import { setUpStartNode } from '../kit/start-node';
import type { StartKind } from '../engine/starts';

interface SessionStartConfig {
  teamchat?: string;
  voice?: string;
  messaging?: string;
  testData?: unknown;
  [moduleKey: string]: unknown;
}

const SHARED_START: StartKind = {
  type: 'session-start',
  channel: null,
  testOpening: (testData) => ({ text: typeof testData.text === 'string' ? testData.text : '' }),
};

/** Node properties that are not a module key naming an Environment. */
const NOT_ENVIRONMENTS: ReadonlySet<string> = new Set(['id', 'type', 'z', 'name', 'x', 'y', 'g', 'wires', 'testData', '_users', 'd', 'info']);

/** The Environment kind behind each property the editor offers (a module added later is not checked). */
const SERVES_TYPES: Record<string, string> = {
  teamchat: 'teamchat-environment',
  voice: 'telco-voice-environment',
  messaging: 'telco-messaging-environment',
};

/** The shared Start (Chat / API): serves the Environments it names, with no channel variable. */
export function sessionStart(red: RED, node: RedNode, config: SessionStartConfig): void {
  const serves: Record<string, string> = {};
  for (const [key, value] of Object.entries(config)) {
    if (typeof value === 'string' && value && !NOT_ENVIRONMENTS.has(key)) serves[key] = value;
  }
  setUpStartNode(red, node, { testData: config.testData }, SHARED_START, { serves, servesTypes: SERVES_TYPES });
}
