import type { WebSocket } from 'ws';
import { perRuntime } from '../../kit/per-runtime';

/** A frame the package sends to the provider's ConversationRelay. */
export type RelayFrame =
  | { type: 'text'; token: string; last: boolean; lang?: string }
  | { type: 'play'; source: string }
  | { type: 'sendDigits'; digits: string }
  | { type: 'end'; handoffData: string };

/**
 * A frame the flow wrote itself (Agent say's `msg.relay`), sent as it is: the relay keeps growing
 * (`config`, `hints`, `language` …) faster than the package models it.
 */
export interface RawRelayFrame {
  raw: { type: string } & Record<string, unknown>;
}

/** Turn messages remembered per relay, so an `interrupt` can drop the answers still coming for them. */
const TURNS_KEPT = 32;

/**
 * One ConversationRelay WebSocket of a call, on the instance that accepted it. Its turns run
 * here; Agent say finds it by id.
 */
export class SocketRelay {
  readonly kind = 'socket';
  /** `_msgid`s of the turns emitted since the last interrupt (bounded). */
  private readonly turns: string[] = [];
  /** Turns an interrupt cut off: what Agent say still sends for them is dropped (bounded). */
  private readonly dropped: string[] = [];
  closed = false;
  /** The caller's turns, each waiting for the look at its Session, one after the other. */
  turnsInLine: Promise<void> = Promise.resolve();
  /** How many turns wait in that line (the relay route bounds it). */
  turnsWaiting = 0;

  constructor(
    readonly id: string,
    readonly environment: string,
    readonly callSid: string,
    readonly nodeId: string,
    readonly ws: WebSocket,
  ) {}

  emitted(msgid: string): void {
    this.turns.push(msgid);
    if (this.turns.length > TURNS_KEPT) this.turns.shift();
  }

  /** The caller spoke over the agent: the answers of the turns so far are no longer wanted. */
  interrupted(): void {
    this.dropped.push(...this.turns);
    this.turns.length = 0;
    if (this.dropped.length > TURNS_KEPT) this.dropped.splice(0, this.dropped.length - TURNS_KEPT);
  }

  isDropped(msgid: unknown): boolean {
    return typeof msgid === 'string' && this.dropped.includes(msgid);
  }

  /** Sends a frame; false when the socket is gone. */
  send(frame: RelayFrame | RawRelayFrame): boolean {
    if (this.closed || this.ws.readyState !== this.ws.OPEN) return false;
    this.ws.send(JSON.stringify('raw' in frame ? frame.raw : frame));
    return true;
  }
}

/**
 * The stand-in relay of an AI agent Task waiting in a test-chat Session: what Agent say sends is
 * shown in the chat (text tokens joined until the last one) instead of going to a phone.
 */
export class TestRelay {
  readonly kind = 'test';
  /** Text tokens of the answer being streamed, until one with `last`. */
  pending = '';
  /** Notes to the Session go one after the other, in the order Agent say sent them. */
  chain: Promise<unknown> = Promise.resolve();

  constructor(
    readonly id: string,
    readonly sessionId: string,
    readonly nodeId: string,
  ) {}
}

export type Relay = SocketRelay | TestRelay;

/** Relays one runtime holds at most (a bound, not a limit any deployment should meet). */
export const MAX_RELAYS = 5000;

/** The relays of one Node-RED runtime, by relay id. */
export class AgentRelays {
  private readonly relays = new Map<string, Relay>();

  get(id: unknown): Relay | undefined {
    return typeof id === 'string' ? this.relays.get(id) : undefined;
  }

  get full(): boolean {
    return this.relays.size >= MAX_RELAYS;
  }

  get size(): number {
    return this.relays.size;
  }

  add(relay: Relay): void {
    const earlier = this.relays.get(relay.id);
    // The provider reconnected (or the test Task was entered again): the newer relay serves.
    if (earlier && earlier !== relay && earlier.kind === 'socket') closeSocket(earlier, 1000, 'replaced by a new connection');
    this.relays.delete(relay.id);
    this.relays.set(relay.id, relay);
    // Only a bound: relays go when their Session ends or their socket closes; past it the oldest go first.
    while (this.relays.size > MAX_RELAYS) {
      const oldest = this.relays.values().next().value as Relay;
      this.remove(oldest);
      if (oldest.kind === 'socket') closeSocket(oldest, 1013, 'too many relays');
    }
  }

  remove(relay: Relay): void {
    if (this.relays.get(relay.id) === relay) this.relays.delete(relay.id);
  }

  /**
   * The call's relays close when its Session ends (the End button, the idle expiry, a hang-up): the
   * caller no longer talks to a flow that has let go of the call, and the provider's action URL
   * finds no Session and hangs up.
   */
  closeOfCall(relayId: string, callSid: string, code: number, reason: string): void {
    const relay = this.relays.get(relayId);
    if (relay?.kind !== 'socket' || relay.callSid !== callSid) return;
    this.close(relay, code, reason);
  }

  /** This socket closes (not a newer one of the same relay id, which serves on). */
  close(relay: SocketRelay, code: number, reason: string): void {
    this.remove(relay);
    closeSocket(relay, code, reason);
  }

  /** A test Session ended (End, Restart, its idle expiry): its stand-in relay goes with it. */
  releaseOfTest(relayId: string, sessionId: string): void {
    const relay = this.relays.get(relayId);
    if (relay?.kind === 'test' && relay.sessionId === sessionId) this.remove(relay);
  }

  /** The node's relays close with it (a deploy, a stop): the provider then reconnects through the action URL. */
  closeOfNode(nodeId: string, code: number, reason: string): void {
    for (const relay of [...this.relays.values()]) {
      if (relay.nodeId !== nodeId) continue;
      this.remove(relay);
      if (relay.kind === 'socket') closeSocket(relay, code, reason);
    }
  }
}

function closeSocket(relay: SocketRelay, code: number, reason: string): void {
  relay.closed = true;
  try {
    relay.ws.close(code, reason);
  } catch {
    relay.ws.terminate();
  }
}

/** The relays of this runtime (two runtimes in one process never share them). */
export const agentRelays = perRuntime(() => new AgentRelays());
