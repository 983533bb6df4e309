import { TaskError } from '../../model/errors';
import { resolvePlaceholders } from '../../model/placeholders';
import type { RedNode } from '../../model/red';
import { runTask } from '../../kit/task-runner';
import { readField } from '../../kit/typed-field';
import { addVerb } from '../behaviour';
import type { VoiceModule } from '../voice-module';
import { isE164 } from '../../model/phone-number';
import { requireCall } from './voice-session';

export interface DialConfig {
  destination?: string;
  /** `str` (or absent, in flows saved before typed inputs) or msg/flow/global/env; so is callerIdType. */
  destinationType?: string;
  timeout?: number | string;
  record?: string;
  callerId?: string;
  callerIdType?: string;
}

const RECORD_MODES: ReadonlySet<string> = new Set(['do-not-record', 'record-from-answer', 'record-from-answer-dual']);

/** TelcoVoiceDialTask: forwards the call; the flow's next verbs run when the forwarded call ends. */
export function dialNode(voice: VoiceModule, node: RedNode, config: DialConfig): void {
  const { red, engine } = voice;
  const timeout = Math.max(1, Math.floor(Number(config.timeout) || 30));
  const record = config.record || 'do-not-record';
  node.on('input', (msg, send, done) => {
    runTask(engine, node, msg, send, done, async (session) => {
      const where = requireCall(session, node.type);
      const resolve = (text: string) => resolvePlaceholders(text, msg.vars);
      const number = (await readField(red, node, msg, config.destination, config.destinationType, resolve)).replace(/[\s().-]/g, '');
      if (!isE164(number)) throw new TaskError(3005, `Destination "${number}" is not an E.164 number (for example +14155550100)`);
      const callerId = (await readField(red, node, msg, config.callerId, config.callerIdType, resolve)).replace(/[\s().-]/g, '');
      if (callerId && !isE164(callerId)) throw new TaskError(3005, `CallerId "${callerId}" is not an E.164 number`);
      if (!RECORD_MODES.has(record)) throw new TaskError(3005, `RecordCall "${record}" is not one of ${[...RECORD_MODES].join(', ')}`);
      if (where === 'call') addVerb(voice, session, { verb: 'dial', number, timeout, record, ...(callerId ? { callerId } : {}) });
      engine.addHistory(session, { from: 'bot', text: `[transferring the call to ${number}]` });
      return { next: 'output' };
    });
  });
}
