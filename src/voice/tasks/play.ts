import { TaskError } from '../../model/errors';
import { resolvePlaceholders } from '../../model/placeholders';
import type { RedNode } from '../../model/red';
import { runTask } from '../../kit/task-runner';
import { readField } from '../../kit/typed-field';
import { addVerb } from '../behaviour';
import type { VoiceModule } from '../voice-module';
import { requireCall } from './voice-session';

export interface PlayConfig {
  mediaUrl?: string;
  /** `str` (or absent, in flows saved before typed inputs) or msg/flow/global/env. */
  mediaUrlType?: string;
  loop?: number | string;
}

/** TelcoVoicePlayTask: plays a remote audio file to the caller; Loop 0 repeats until hang-up. */
export function playNode(voice: VoiceModule, node: RedNode, config: PlayConfig): void {
  const { red, engine } = voice;
  const loop = config.loop === '' || config.loop === undefined ? 1 : Math.max(0, Math.floor(Number(config.loop)));
  node.on('input', (msg, send, done) => {
    runTask(engine, node, msg, send, done, async (session) => {
      const where = requireCall(session, node.type);
      const url = (await readField(red, node, msg, config.mediaUrl, config.mediaUrlType, (t) => resolvePlaceholders(t, msg.vars))).trim();
      if (!url) throw new TaskError(3005, 'MediaUrl is empty');
      if (!/^https?:\/\/[^\s]+$/i.test(url)) throw new TaskError(3005, `MediaUrl "${url}" is not an http(s) URL`);
      if (!Number.isFinite(loop)) throw new TaskError(3005, 'Loop must be a number (0 = until the caller hangs up)');
      if (where === 'call') addVerb(voice, session, { verb: 'play', url, loop });
      engine.addHistory(session, { from: 'bot', text: `[audio] ${url}${loop === 1 ? '' : loop === 0 ? ' (until hang-up)' : ` (x${loop})`}` });
      return { next: 'output' };
    });
  });
}
