import type { ChannelBehaviour } from '../engine/behaviour';
import { agentRelays } from './agent/relays';
import type { SessionRecord } from '../model/session';
import type { VoiceModule } from './voice-module';
import { languageFor, speechFor } from './speech';
import { nextUrl } from './urls';
import type { Verb } from './verbs';

/**
 * Adds a verb to the answer being built for the Session's call: in this process's round, or, when
 * several instances share the Environment's store, in the store (whichever instance answers).
 */
export function addVerb(voice: VoiceModule, session: SessionRecord, verb: Verb): void {
  const shared = voice.shared.storeFor(session.environment);
  if (shared) voice.shared.add(shared, { environment: session.environment, conversation: session.key }, verb);
  else voice.rounds.of(session.environment, session.key).add(verb);
}

/**
 * The standard Tasks on a phone call: OutputTask speaks, InputTask listens inside a Gather for
 * speech or digits, EndTask hangs up. Verbs go to the call's round; the webhook answers them.
 */
export function telcoVoiceBehaviour(voice: VoiceModule): ChannelBehaviour {
  return {
    channel: 'TelcoVoice',
    // An InputTask's "no reply after" is the Gather's own timeout: an engine timer armed at the
    // step's commit would run out while the caller still hears an earlier Say, Play or Dial.
    timesNoReply: true,
    async output(task, text) {
      const env = voice.environments.get(task.session.environment);
      const speech = speechFor(env, task.msg.vars, text);
      if (speech.text) addVerb(voice, task.session, { verb: 'say', speech });
      return { text: speech.text };
    },
    async prompt(task, prompt, { noReplySeconds }) {
      const env = voice.environments.get(task.session.environment);
      const speech = speechFor(env, task.msg.vars, prompt);
      addVerb(voice, task.session, {
        verb: 'gather',
        ...(speech.text ? { prompt: speech } : {}),
        // The provider counts it only once the prompt and the verbs before it are done, and posts the
        // silence to the action (actionOnEmptyResult): the InputTask's "no reply" output.
        ...(noReplySeconds ? { timeout: Math.max(1, Math.ceil(noReplySeconds)) } : {}),
        action: env ? nextUrl(env, voice.red.settings.httpNodeRoot) : '',
        language: languageFor(env, task.msg.vars),
        speechModel: env?.speechModel || undefined,
      });
      return { text: speech.text };
    },
    async end(task) {
      addVerb(voice, task.session, { verb: 'hangup' });
    },
    beforeCommit(session) {
      return voice.shared.flush({ environment: session.environment, conversation: session.key });
    },
    sessionEnded(session) {
      // The relay the AI agent Task opened for the call, found by the id it kept on the Session.
      const relay = relayIdOf(session);
      if (relay) agentRelays(voice.red).closeOfCall(relay, session.key, 1000, 'the Session ended');
      const round = voice.rounds.find(session.environment, session.key);
      if (!round) return;
      // A webhook may still be about to answer the last verbs; if none comes, the round goes later.
      if (round.pending) voice.rounds.forgetLater(session.environment, session.key);
      else voice.rounds.forget(session.environment, session.key);
    },
    testSessionEnded(session) {
      // The AI agent Task's stand-in relay, which nothing else lets go of while the runtime runs.
      const relay = relayIdOf(session);
      if (relay) agentRelays(voice.red).releaseOfTest(relay, session.id);
    },
  };
}

/** The id of the relay an AI agent Task kept on the Session, if it did. */
function relayIdOf(session: SessionRecord): string | undefined {
  const relay = session.binding.agentRelay as { id?: unknown } | undefined;
  return typeof relay?.id === 'string' ? relay.id : undefined;
}
