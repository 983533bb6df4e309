import { randomBytes } from 'node:crypto';
import type { Engine } from '../../engine/engine';
import type { InboundMessage } from '../../engine/starts';
import { TaskError } from '../../model/errors';
import { resolvePlaceholders } from '../../model/placeholders';
import type { RED, RedNode } from '../../model/red';
import type { VoiceModule } from '../voice-module';
import { sessionRef, type SessionRecord, type TokenMessage } from '../../model/session';
import { bareVariable } from '../../kit/start-node';
import { routeErrorLater, runTask } from '../../kit/task-runner';
import { addVerb } from '../behaviour';
import type { VoiceEnvironment } from '../environment';
import { languageFor } from '../speech';
import { nextUrl, relayUrl } from '../urls';
import type { Verb } from '../verbs';
import { agentRelays, TestRelay, type AgentRelays } from '../agent/relays';
import type { RelayBinding } from '../agent/relay-route';
import { requireCall, showsInTestChat } from './voice-session';

export interface AgentConfig {
  url?: string;
  welcomeGreeting?: string;
  language?: string;
  voice?: string;
  ttsProvider?: string;
  transcriptionProvider?: string;
  interruptible?: string;
  dtmfDetection?: boolean;
  parameters?: Array<{ name?: string; value?: string }>;
  /** More attributes of the `<ConversationRelay>` noun, for what the Task has no property for (yet). */
  attributes?: Array<{ name?: string; value?: string }>;
  resultVariable?: string;
}

/** The provider answers the same relay again after the socket dropped (64105) this many times at most. */
export const MAX_RECONNECTS = 3;
/** The provider's code for a relay WebSocket that ended abruptly. */
const SOCKET_DROPPED = '64105';
const INTERRUPTIBLE = new Set(['none', 'dtmf', 'speech', 'any']);
/**
 * The noun's attributes the Task sets from its own properties. The provider reads attribute names
 * without regard to case (its own libraries write some in lower case), so an extra attribute of one
 * of these names, in any case, would set it twice.
 */
const OWN_ATTRIBUTES = ['url', 'welcomeGreeting', 'language', 'voice', 'ttsProvider', 'transcriptionProvider', 'interruptible', 'dtmfDetection'];

/** What the result variable holds when the relay ended. */
export interface AgentResult {
  handoffData: unknown;
  status: string;
  duration: number | null;
  errorCode: string;
  errorMessage: string;
  reconnects: number;
}

/**
 * AI agent (ConversationRelay): hands the call to the provider's speech-to-text / text-to-speech
 * relay and waits. With `url` empty this flow is the agent: each caller turn leaves output 3 and
 * Agent say answers on the relay. When the relay ends, the provider posts the action URL (the next
 * route) and output 1 goes on with the result variable; a dropped socket is answered with the
 * same relay again, at most three times, then output 2 with 4001.
 */
export function agentNode(voice: VoiceModule, node: RedNode, config: AgentConfig): void {
  const { red, engine } = voice;
  const relays = agentRelays(red);
  const resultVariable = bareVariable(config.resultVariable) || 'agent';
  const external = (config.url ?? '').trim();

  node.on('input', (msg, send, done) => {
    runTask(engine, node, msg, send, done, async (session) => {
      // Refused before anything is said, in the Test chat too, so a bad list is found there.
      extraAttributes(config, msg.vars);
      const relayId = randomBytes(12).toString('base64url');
      // A new relay: the drops of one before it (the error branch looping back here) are not its own.
      delete session.binding.agentReconnects;
      if (requireCall(session, node.type) === 'chat') {
        if (external) throw new TaskError(4012, 'The test chat cannot talk to an external agent server (url is set); try it on a call');
        relays.add(new TestRelay(relayId, session.id, node.id));
        session.binding.agentRelay = { id: relayId, nodeId: node.id, reconnects: 0 } satisfies RelayBinding;
        const greeting = resolvePlaceholders(config.welcomeGreeting ?? '', msg.vars).trim();
        engine.addHistory(session, { from: 'bot', kind: 'prompt', text: greeting || '[AI agent: type a line to speak to it]' });
        return { next: 'wait' };
      }
      const env = voice.environments.get(session.environment);
      if (!env) throw new TaskError(4008, 'The voice Environment of this call is not deployed');
      const binding: RelayBinding = { id: relayId, nodeId: node.id, reconnects: 0 };
      addVerb(voice, session, relayVerb(red, env, config, session, msg.vars, external ? undefined : binding, true));
      if (!external) session.binding.agentRelay = binding;
      else delete session.binding.agentRelay;
      engine.addHistory(session, { from: 'bot', kind: 'prompt', text: `[AI agent${external ? ` at ${resolvePlaceholders(external, msg.vars)}` : ''}]` });
      return { next: 'wait' };
    });
  });

  engine.registerWaitingNode({
    node,
    async resume(session, message, token) {
      if (showsInTestChat(session)) return testChatStep(engine, relays, node, session, message, token, resultVariable);
      const relay = (message.data?.relay ?? {}) as Record<string, string>;
      const binding = session.binding.agentRelay as RelayBinding | undefined;
      const reconnects = binding?.reconnects ?? Number(session.binding.agentReconnects ?? 0);
      if (relay.errorCode === SOCKET_DROPPED) {
        if (reconnects >= MAX_RECONNECTS) {
          delete session.binding.agentRelay;
          delete session.binding.agentReconnects;
          routeErrorLater(
            engine,
            node,
            session,
            token,
            new TaskError(
              4001,
              `The AI agent's WebSocket dropped ${reconnects + 1} times (64105 ${relay.errorMessage ?? ''}); the call goes on without it`.trim(),
            ),
          );
          return;
        }
        // The caller stays on the line: the same relay again, without the greeting.
        const env = voice.environments.get(session.environment);
        if (!env) {
          routeErrorLater(engine, node, session, token, new TaskError(4008, 'The voice Environment of this call is not deployed'));
          return;
        }
        const again = binding ? { ...binding, reconnects: reconnects + 1 } : undefined;
        if (again) session.binding.agentRelay = again;
        else session.binding.agentReconnects = reconnects + 1;
        addVerb(voice, session, relayVerb(red, env, config, session, token.vars, again, false));
        engine.addLog(session, {
          level: 'warn',
          code: 4001,
          message: `AI agent WebSocket dropped (64105); reconnect ${reconnects + 1} of ${MAX_RECONNECTS}`,
          nodeId: node.id,
        });
        await engine.wait(session, token, node);
        return;
      }
      delete session.binding.agentRelay;
      delete session.binding.agentReconnects;
      token.vars[resultVariable] = {
        handoffData: parsedHandoff(relay.handoffData),
        status: relay.status ?? '',
        duration: relay.duration ? Number(relay.duration) : null,
        errorCode: relay.errorCode ?? '',
        errorMessage: relay.errorMessage ?? '',
        reconnects,
      } satisfies AgentResult;
      node.send([token, null, null]);
    },
  });

  node.on('close', (_removed, done) => {
    engine.unregisterWaitingNode(node);
    // The provider reports the closed socket (64105) on the action URL and is answered with the relay again.
    relays.closeOfNode(node.id, 1001, 'Node-RED is redeploying or stopping');
    done();
  });
}

/**
 * `<Connect action><ConversationRelay …>`: the Task's properties as attributes (placeholders
 * resolved), `parameters` as `<Parameter>` children; without an external url, our relay route.
 */
function relayVerb(
  red: RED,
  env: VoiceEnvironment,
  config: AgentConfig,
  session: SessionRecord,
  vars: Record<string, unknown>,
  binding: RelayBinding | undefined,
  greet: boolean,
): Verb {
  const root = red.settings.httpNodeRoot;
  const text = (value: string | undefined) => resolvePlaceholders(value ?? '', vars).trim();
  const url = binding ? relayUrl(env, root, session.key, binding.id) : text(config.url);
  if (!binding && !/^wss:\/\/\S+$/i.test(url)) throw new TaskError(3005, `The agent url "${url}" is not a wss:// URL`);
  const interruptible = config.interruptible || 'any';
  if (!INTERRUPTIBLE.has(interruptible)) throw new TaskError(3005, `Interruptible "${interruptible}" is not one of none, dtmf, speech, any`);
  const attributes: Record<string, string | boolean> = {};
  const put = (name: string, value: string) => {
    if (value) attributes[name] = value;
  };
  if (greet) put('welcomeGreeting', text(config.welcomeGreeting));
  put('language', text(config.language) || languageFor(env, vars) || '');
  put('voice', text(config.voice));
  put('ttsProvider', text(config.ttsProvider));
  put('transcriptionProvider', text(config.transcriptionProvider));
  attributes.interruptible = interruptible;
  attributes.dtmfDetection = config.dtmfDetection !== false;
  for (const [name, value] of extraAttributes(config, vars)) put(name, value);
  const parameters = (config.parameters ?? [])
    .filter((p) => typeof p?.name === 'string' && p.name.trim())
    .map((p) => ({ name: p.name!.trim(), value: resolvePlaceholders(String(p.value ?? ''), vars) }));
  return { verb: 'relay', action: nextUrl(env, root), url, attributes, parameters };
}

/**
 * The `attributes` list, names checked and values resolved: a name is letters and digits (what an
 * XML attribute of the provider's looks like), once, and none the Task sets from a property.
 */
function extraAttributes(config: AgentConfig, vars: Record<string, unknown>): Array<[string, string]> {
  const rows = config.attributes ?? [];
  if (!Array.isArray(rows)) throw new TaskError(3005, "The AI agent's attributes must be a list of {name, value}");
  const seen = new Set<string>();
  const out: Array<[string, string]> = [];
  for (const row of rows) {
    const name = typeof row?.name === 'string' ? row.name.trim() : '';
    if (!name) continue;
    if (!/^[A-Za-z0-9]+$/.test(name)) throw new TaskError(3005, `The ConversationRelay attribute name "${name}" may hold only letters and digits`);
    const own = OWN_ATTRIBUTES.find((a) => a.toLowerCase() === name.toLowerCase());
    if (own)
      throw new TaskError(
        3005,
        `The ConversationRelay attribute "${name}" is set by the AI agent's own property (${own}): set it there, not in More attributes`,
      );
    if (seen.has(name.toLowerCase())) throw new TaskError(3005, `The ConversationRelay attribute "${name}" is in More attributes twice`);
    seen.add(name.toLowerCase());
    out.push([name, resolvePlaceholders(String(row.value ?? ''), vars).trim()]);
  }
  return out;
}

/** Hand-off data is a string on the wire; JSON (what Agent say sends) is handed on parsed. */
function parsedHandoff(raw: string | undefined): unknown {
  if (raw === undefined || raw === '') return null;
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}

/**
 * The test chat: a typed line is a turn (output 3) and the Task keeps waiting; what Agent say sent
 * comes back as a note (a bot line); its `end` goes on at output 1.
 */
async function testChatStep(
  engine: Engine,
  relays: AgentRelays,
  node: RedNode,
  session: SessionRecord,
  message: InboundMessage,
  token: TokenMessage,
  resultVariable: string,
) {
  const note = message.data?.agentNote as { kind: 'said' | 'end'; text?: string; handoffData?: string; frame?: unknown } | undefined;
  if (note?.kind === 'end') {
    delete session.binding.agentRelay;
    token.vars[resultVariable] = {
      handoffData: parsedHandoff(note.handoffData),
      status: 'completed',
      duration: null,
      errorCode: '',
      errorMessage: '',
      reconnects: 0,
    } satisfies AgentResult;
    node.send([token, null, null]);
    return;
  }
  // A frame of the flow's own is shown as what went on the relay, not as words the caller heard.
  if (note?.kind === 'said') engine.addHistory(session, { from: 'bot', text: note.text ?? '', ...(note.frame ? { kind: 'relay', detail: note.frame } : {}) });
  const binding = session.binding.agentRelay as RelayBinding | undefined;
  await engine.wait(session, token, node);
  if (note || !binding) return;
  // A redeploy of the Task closed its stand-in relay; the Session still waits here, so it serves again.
  if (!relays.get(binding.id)) relays.add(new TestRelay(binding.id, session.id, node.id));
  const turn = {
    _msgid: token._msgid,
    session: sessionRef(session),
    vars: structuredClone(session.vars),
    payload: message.text,
    agent: { relayId: binding.id, type: 'prompt', lang: '' },
  };
  node.send([null, null, turn]);
}
