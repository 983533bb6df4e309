import type { RED, RedNode } from '../engine/red';
import { setUpStartNode } from '../engine/start-node';
import type { StartKind } from '../engine/starts';

interface SessionStartConfig {
  teamchat?: string;
  voice?: string;
  messaging?: string;
  testData?: unknown;
}

const SHARED_START: StartKind = {
  type: 'session-start',
  channel: null,
  testOpening: (testData) => ({ text: typeof testData.text === 'string' ? testData.text : '' }),
};

/** The shared Start (Chat / API): serves the Environments it names, with no channel variable. */
export function sessionStart(red: RED, node: RedNode, config: SessionStartConfig): void {
  setUpStartNode(red, node, { testData: config.testData }, SHARED_START, {
    serves: { teamchat: config.teamchat ?? '', voice: config.voice ?? '', messaging: config.messaging ?? '' },
  });
}
