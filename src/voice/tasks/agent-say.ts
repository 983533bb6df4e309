import type { Engine } from '../../engine/engine';
import { TaskError, asTaskError } from '../../model/errors';
import type { RedNode } from '../../model/red';
import type { VoiceModule } from '../voice-module';
import type { TokenMessage } from '../../model/session';
import { routeError } from '../../kit/task-runner';
import { agentRelays, type AgentRelays, type RawRelayFrame, type RelayFrame, type TestRelay } from '../agent/relays';

/**
 * Agent say: sends on the relay of the turn it answers (`msg.agent.relayId`): `msg.relay` as one
 * frame as it is, then `msg.payload` as a text token (streamed while `msg.partial` is true, in
 * `msg.lang` when set), `msg.play`, `msg.digits`, or, with `msg.end === true`, the end of the relay
 * with `msg.payload` as hand-off data. A relay that is gone (the call ended, another instance holds
 * it) takes output 2 with 4012; it never throws.
 */
export function agentSayNode(voice: VoiceModule, node: RedNode): void {
  const { red, engine } = voice;
  const relays = agentRelays(red);
  node.on('input', (msg, send, done) => {
    let frames: Array<RelayFrame | RawRelayFrame>;
    try {
      frames = framesOf(msg);
    } catch (err) {
      routeError(engine, node, undefined, msg, send, done, asTaskError(err));
      return;
    }
    const agent = msg.agent as { relayId?: unknown } | undefined;
    const relay = relays.get(agent?.relayId);
    if (!relay) {
      const error = new TaskError(
        4012,
        `The AI agent relay ${typeof agent?.relayId === 'string' ? agent.relayId : '(msg.agent.relayId missing)'} is gone: the call's agent ended, or it runs on another instance`,
      );
      routeError(engine, node, undefined, msg, send, done, error);
      return;
    }
    if (relay.kind === 'test') {
      showInTestChat(engine, relays, relay, frames);
      send([msg, null]);
      done();
      return;
    }
    if (relay.isDropped(msg._msgid)) {
      // The caller interrupted this turn: what is still coming for it is not said.
      done();
      return;
    }
    for (const frame of frames) {
      if (!relay.send(frame)) {
        routeError(engine, node, undefined, msg, send, done, new TaskError(4012, `The AI agent relay ${relay.id} closed (the call's agent ended)`));
        return;
      }
    }
    send([msg, null]);
    done();
  });
}

/** The relay messages one `msg` asks for, in the order they are sent: its own frame first. */
function framesOf(msg: TokenMessage): Array<RelayFrame | RawRelayFrame> {
  const frames: Array<RelayFrame | RawRelayFrame> = [];
  if (msg.relay !== undefined) frames.push(rawFrameOf(msg.relay));
  if (msg.end === true) {
    const handoff = msg.payload === undefined ? '' : JSON.stringify(msg.payload);
    frames.push({ type: 'end', handoffData: handoff ?? '' });
    return frames;
  }
  const payload = msg.payload;
  if (payload !== undefined && payload !== null) {
    if (typeof payload !== 'string' && typeof payload !== 'number' && typeof payload !== 'boolean') {
      throw new TaskError(3005, 'msg.payload must be the text to say (a string); use msg.end with an object to hand data back');
    }
    if (msg.lang !== undefined && (typeof msg.lang !== 'string' || !msg.lang.trim())) {
      throw new TaskError(3005, 'msg.lang must be the language of the text, such as "fr-FR" or "multi"');
    }
    const lang = typeof msg.lang === 'string' ? { lang: msg.lang.trim() } : {};
    frames.push({ type: 'text', token: String(payload), last: msg.partial !== true, ...lang });
  }
  if (msg.play !== undefined) {
    if (typeof msg.play !== 'string' || !/^https?:\/\/\S+$/i.test(msg.play)) throw new TaskError(3005, 'msg.play must be an http(s) URL of the audio to play');
    frames.push({ type: 'play', source: msg.play });
  }
  if (msg.digits !== undefined) {
    const digits = typeof msg.digits === 'number' ? String(msg.digits) : typeof msg.digits === 'string' ? msg.digits : '';
    if (!/^[0-9*#wW]+$/.test(digits)) throw new TaskError(3005, `msg.digits "${digits}" may hold only 0-9, *, # and w`);
    frames.push({ type: 'sendDigits', digits });
  }
  if (!frames.length) throw new TaskError(3005, 'Nothing to send: set msg.payload (text), msg.relay, msg.play, msg.digits or msg.end');
  return frames;
}

/**
 * `msg.relay`: a plain object with a string `type`, sent as it is. Checked here, whole, so that a
 * frame that cannot be sent (a cycle, a BigInt) is refused before anything of the `msg` is.
 */
function rawFrameOf(value: unknown): RawRelayFrame {
  // A function node builds its objects in a context of its own, with its own Object.prototype: the tag tells a plain one.
  const plain = typeof value === 'object' && value !== null && !Array.isArray(value) && Object.prototype.toString.call(value) === '[object Object]';
  const type = plain ? (value as { type?: unknown }).type : undefined;
  if (!plain || typeof type !== 'string' || !type.trim()) {
    throw new TaskError(
      3005,
      'msg.relay must be a ConversationRelay message: an object with a string type, such as {"type": "language", "ttsLanguage": "fr-FR"}',
    );
  }
  let json: string;
  try {
    json = JSON.stringify(value);
  } catch (err) {
    throw new TaskError(3005, `msg.relay cannot be sent as JSON: ${(err as Error).message}`);
  }
  return { raw: JSON.parse(json) as RawRelayFrame['raw'] };
}

/**
 * The test chat: text tokens are joined until the last one, then shown as one bot line; a play,
 * digits or a frame of the flow's own (`msg.relay`) as a note; the end goes on at the AI agent's output 1. Each goes to the Session as a
 * note in order, through its conversation, so the transcript keeps it.
 */
function showInTestChat(engine: Engine, relays: AgentRelays, relay: TestRelay, frames: Array<RelayFrame | RawRelayFrame>): void {
  const notes: Array<Record<string, unknown>> = [];
  for (const frame of frames) {
    if ('raw' in frame) {
      notes.push({ kind: 'said', text: JSON.stringify(frame.raw), frame: frame.raw });
    } else if (frame.type === 'text') {
      relay.pending += frame.token;
      if (frame.last) {
        notes.push({ kind: 'said', text: relay.pending });
        relay.pending = '';
      }
    } else if (frame.type === 'play') notes.push({ kind: 'said', text: `[audio] ${frame.source}` });
    else if (frame.type === 'sendDigits') notes.push({ kind: 'said', text: `[digits] ${frame.digits}` });
    else {
      if (relay.pending) notes.push({ kind: 'said', text: relay.pending });
      relay.pending = '';
      notes.push({ kind: 'end', handoffData: frame.handoffData });
      relays.remove(relay);
    }
  }
  for (const note of notes) {
    relay.chain = relay.chain
      .then(() => engine.deliverToSession(relay.sessionId, { text: '', files: [], notSaid: true, data: { agentNote: note } }))
      .then((taken) => {
        if (!taken) relays.remove(relay);
      })
      .catch(() => relays.remove(relay));
  }
}
