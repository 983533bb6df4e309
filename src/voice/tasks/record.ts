import { textOf } from '../../model/text';
import { TaskError } from '../../model/errors';
import type { RedNode } from '../../model/red';
import { bareVariable } from '../../kit/start-node';
import { routeErrorLater, runTask } from '../../kit/task-runner';
import { registerWaitingTask } from '../../kit/waiting-task';
import { VOICE_RECORD_MAX_SECONDS } from '../../model/limits';
import { addVerb } from '../behaviour';
import type { VoiceModule } from '../voice-module';
import { nextUrl, noRecordingUrl } from '../urls';
import { requireCall } from './voice-session';

export interface RecordConfig {
  maxLength?: number | string;
  playBeep?: boolean;
  trim?: string;
  transcribe?: boolean;
  urlVariable?: string;
  sidVariable?: string;
}

/**
 * TelcoVoiceRecordTask: records the caller; the Session waits until the provider reports the
 * finished recording on the next webhook, then its URL and id go to the Store variables.
 */
export function recordNode(voice: VoiceModule, node: RedNode, config: RecordConfig): void {
  const { red, engine } = voice;
  const maxLength = Math.min(VOICE_RECORD_MAX_SECONDS, Math.max(1, Math.floor(Number(config.maxLength) || 30)));
  const trim = config.trim === 'do-not-trim' ? 'do-not-trim' : 'trim-silence';
  const urlVariable = bareVariable(config.urlVariable);
  const sidVariable = bareVariable(config.sidVariable);

  node.on('input', (msg, send, done) => {
    runTask(engine, node, msg, send, done, async (session) => {
      if (requireCall(session, node.type) === 'call') {
        const env = voice.environments.get(session.environment);
        if (!env) throw new TaskError(4008, 'The voice Environment of this call is not deployed');
        addVerb(voice, session, {
          verb: 'record',
          action: nextUrl(env, red.settings.httpNodeRoot),
          maxLength,
          playBeep: config.playBeep !== false,
          trim,
          transcribe: config.transcribe === true,
        });
        // The provider requests the action only for a recording with audio; after an empty one it
        // goes on to the next verb, and a call whose answer ends at Record would hang up there.
        addVerb(voice, session, { verb: 'redirect', url: noRecordingUrl(env, red.settings.httpNodeRoot) });
      }
      engine.addHistory(session, { from: 'bot', kind: 'prompt', text: `[recording, up to ${maxLength} s]` });
      return { next: 'wait' };
    });
  });

  registerWaitingTask(engine, node, {
    answered(session, message, token) {
      const data = message.data ?? {};
      // In the test chat the typed text stands for the recording.
      const url = session.isTest ? message.text : textOf(data.recordingUrl);
      const sid = session.isTest ? `RE-test-${Date.now().toString(36)}` : textOf(data.recordingSid);
      if (!url) {
        routeErrorLater(engine, node, session, token, new TaskError(4009, 'The recording ended without audio'));
        return;
      }
      if (urlVariable) token.vars[urlVariable] = url;
      if (sidVariable) token.vars[sidVariable] = sid;
      node.send([token, null]);
    },
  });
}
