import type { RED, RedNode } from '../model/red';
import { setUpStartNode, type StartConfig } from '../kit/start-node';
import type { StartKind } from '../engine/starts';
import { SAMPLE_CALLED, SAMPLE_CALLER, type CallVariable } from './call-variable';

/** TelcoCallStartTask: where a call's Session begins; the voice webhook builds `{call}`. */
export const CALL_START: StartKind = {
  type: 'telco-call-start',
  channel: 'TelcoVoice',
  testOpening(testData, channel) {
    const text = (key: string, fallback = '') => (typeof testData[key] === 'string' && testData[key] ? String(testData[key]) : fallback);
    const call: CallVariable = {
      from: text('from', SAMPLE_CALLER),
      to: text('to', SAMPLE_CALLED),
      callId: `CA-test-${Date.now().toString(36)}`,
      direction: 'inbound',
      callerName: text('callerName'),
      fromCountry: text('fromCountry'),
      channel,
      isTest: true,
    };
    return { value: { ...call }, text: '', sender: call.from, recipient: call.to };
  },
};

export function callStartNode(red: RED, node: RedNode, config: StartConfig): void {
  setUpStartNode(red, node, { ...config, variable: config.variable || 'call' }, CALL_START, {
    environment: config.environment,
    environmentType: 'telco-voice-environment',
  });
}
