import type { Engine } from '../../engine/engine';
import { TaskError, asTaskError } from '../../model/errors';
import type { RedNode } from '../../model/red';
import type { VoiceModule } from '../voice-module';
import type { TokenMessage } from '../../model/session';
import { routeError } from '../../kit/task-runner';
import { agentRelays, type AgentRelays, type RelayFrame, type TestRelay } from '../agent/relays';

/**
 * Agent say: sends on the relay of the turn it answers (`msg.agent.relayId`): `msg.payload` as a
 * text token (streamed while `msg.partial` is true), `msg.play`, `msg.digits`, or, with
 * `msg.end === true`, the end of the relay with `msg.payload` as hand-off data. A relay that is
 * gone (the call ended, another instance holds it) takes output 2 with 4012; it never throws.
 */
export function agentSayNode(voice: VoiceModule, node: RedNode): void {
  const { red, engine } = voice;
  const relays = agentRelays(red);
  node.on('input', (msg, send, done) => {
    let frames: RelayFrame[];
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

/** The relay messages one `msg` asks for, in the order they are sent. */
function framesOf(msg: TokenMessage): RelayFrame[] {
  if (msg.end === true) {
    const handoff = msg.payload === undefined ? '' : JSON.stringify(msg.payload);
    return [{ type: 'end', handoffData: handoff ?? '' }];
  }
  const frames: RelayFrame[] = [];
  const payload = msg.payload;
  if (payload !== undefined && payload !== null) {
    if (typeof payload !== 'string' && typeof payload !== 'number' && typeof payload !== 'boolean') {
      throw new TaskError(3005, 'msg.payload must be the text to say (a string); use msg.end with an object to hand data back');
    }
    frames.push({ type: 'text', token: String(payload), last: msg.partial !== true });
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
  if (!frames.length) throw new TaskError(3005, 'Nothing to send: set msg.payload (text), msg.play, msg.digits or msg.end');
  return frames;
}

/**
 * The test chat: text tokens are joined until the last one, then shown as one bot line; a play or
 * digits as a note; the end goes on at the AI agent's output 1. Each goes to the Session as a
 * note in order, through its conversation, so the transcript keeps it.
 */
function showInTestChat(engine: Engine, relays: AgentRelays, relay: TestRelay, frames: RelayFrame[]): void {
  const notes: Array<Record<string, unknown>> = [];
  for (const frame of frames) {
    if (frame.type === 'text') {
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
