import type { ChannelBehaviour } from '../engine/behaviour';
import type { RED } from '../model/red';
import type { SessionRecord } from '../model/session';
import { callRounds } from './call-rounds';
import { sharedRounds } from './shared-rounds';
import { voiceEnvironments } from './environment';
import { languageFor, speechFor } from './speech';
import { nextUrl } from './urls';
import type { Verb } from './verbs';

/**
 * Adds a verb to the answer being built for the Session's call: in this process's round, or, when
 * several instances share the Environment's store, in the store (whichever instance answers).
 */
export function addVerb(session: SessionRecord, verb: Verb): void {
  const shared = sharedRounds.storeFor(session.environment);
  if (shared) sharedRounds.add(shared, { environment: session.environment, conversation: session.key }, verb);
  else callRounds.of(session.environment, session.key).add(verb);
}

/**
 * The standard Tasks on a phone call: OutputTask speaks, InputTask listens inside a Gather for
 * speech or digits, EndTask hangs up. Verbs go to the call's round; the webhook answers them.
 */
export function telcoVoiceBehaviour(red: RED): ChannelBehaviour {
  return {
    channel: 'TelcoVoice',
    async output(task, text) {
      const env = voiceEnvironments.get(task.session.environment);
      const speech = speechFor(env, task.msg.vars, text);
      if (speech.text) addVerb(task.session, { verb: 'say', speech });
      return { text: speech.text };
    },
    async prompt(task, prompt) {
      const env = voiceEnvironments.get(task.session.environment);
      const speech = speechFor(env, task.msg.vars, prompt);
      addVerb(task.session, {
        verb: 'gather',
        ...(speech.text ? { prompt: speech } : {}),
        action: env ? nextUrl(env, red.settings.httpNodeRoot) : '',
        language: languageFor(env, task.msg.vars),
        speechModel: env?.speechModel || undefined,
      });
      return { text: speech.text };
    },
    async end(task) {
      addVerb(task.session, { verb: 'hangup' });
    },
    beforeCommit(session) {
      return sharedRounds.flush({ environment: session.environment, conversation: session.key });
    },
    sessionEnded(session) {
      const round = callRounds.find(session.environment, session.key);
      if (!round) return;
      // A webhook may still be about to answer the last verbs; if none comes, the round goes later.
      if (round.pending) callRounds.forgetLater(session.environment, session.key);
      else callRounds.forget(session.environment, session.key);
    },
  };
}
