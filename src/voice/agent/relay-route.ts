import type { IncomingMessage } from 'node:http';
import { runtimeText } from '../../model/texts';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import { calledUrl, normalisedRoot } from '../../http/public-url';
import { RefusalLog } from '../../http/refusal-log';
import type { HttpRequest, RED } from '../../model/red';
import { sessionRef, type SessionRecord } from '../../model/session';
import { isSignedByTwilio } from '../../telco/twilio-signature';
import { missingCredentials, type VoiceEnvironment } from '../environment';
import type { VoiceModule } from '../voice-module';
import { RELAY_PREFIX, toWebSocketScheme } from '../urls';
import { agentRelays, SocketRelay } from './relays';

/** The node type a Session waits at while its call talks to the relay. */
export const AGENT_TYPE = 'telco-voice-agent';

/** What the waiting AI agent Task keeps on the Session for its relay (session.binding.agentRelay). */
export interface RelayBinding {
  id: string;
  nodeId: string;
  reconnects: number;
}

/** Frames from the provider are short texts; a bigger one is no relay message. */
const MAX_FRAME = 64 * 1024;

/** Turns of one relay that may wait for their Session's look at once; a caller speaks far slower than a store answers. */
const TURNS_WAITING = 32;

/** A caller's turn (`prompt`, `dtmf`, `interrupt`), or the type of a provider message the package does not model. */
type TurnType = string;

/** The longest `type` a provider message is read with; past it the message is no relay message. */
const MAX_TYPE = 100;

/**
 * The relay route: ConversationRelay WebSockets on Node-RED's own HTTP server, under the httpNode
 * root, so they pass the same reverse proxy as the webhooks and need no second port. Registered
 * once per runtime; each upgrade looks the live Environment and the waiting Session up.
 */
export function registerRelayRoute(voice: VoiceModule): void {
  const { red, engine } = voice;
  const server = red.server;
  if (!server) return;
  const relays = agentRelays(red);
  const refusals = new RefusalLog(red);
  const sockets = new WebSocketServer({ noServer: true, maxPayload: MAX_FRAME });
  const prefix = (normalisedRoot(red.settings.httpNodeRoot) === '/' ? '' : normalisedRoot(red.settings.httpNodeRoot)) + RELAY_PREFIX;

  const refuse = (socket: Duplex, status: number, text: string) => {
    socket.end(`HTTP/1.1 ${status} ${text}\r\nConnection: close\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`);
  };

  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const path = (req.url ?? '').split('?')[0];
    // Other upgrades (the editor's comms, websocket nodes) are theirs to answer.
    if (!path.startsWith(prefix)) return;
    socket.on('error', () => undefined);
    let environmentId: string;
    try {
      environmentId = decodeURIComponent(path.slice(prefix.length));
    } catch {
      // Thrown here, in the server's upgrade event, it would stop Node-RED.
      refuse(socket, 400, 'Bad Request');
      return;
    }
    void accept(req, socket, head, environmentId).catch((err: Error) => {
      red.log.error(`[channel-sessions] ${runtimeText(red, 'voice', 'runtime.log.relayFailed', { message: err.message })}`);
      refuse(socket, 500, 'Internal Server Error');
    });
  });

  async function accept(req: IncomingMessage, socket: Duplex, head: Buffer, environmentId: string): Promise<void> {
    const env = await voice.environments.findById(environmentId);
    if (!env) return refuse(socket, 404, 'Not Found');
    const check = checkRelaySignature(red, env, req);
    if (check) {
      refusals.report(`${env.id}:relay`, (line) => env.node.error(line), runtimeText(red, 'voice', 'runtime.log.relayRefused', { reason: check }));
      return refuse(socket, 403, 'Forbidden');
    }
    if (relays.full) return refuse(socket, 503, 'Service Unavailable');
    const query = new URL(req.url ?? '/', 'http://relay').searchParams;
    const callSid = query.get('call') ?? '';
    const relayId = query.get('relay') ?? '';
    const session = callSid && relayId ? await engine.liveSessionFor(env.id, callSid) : undefined;
    const binding = relayOf(session);
    sockets.handleUpgrade(req, socket, head, (ws) => {
      if (!session || !binding || binding.id !== relayId) {
        env.node.warn(runtimeText(red, 'voice', 'runtime.log.relayNoSession', { callSid: callSid || '(none)' }));
        ws.close(4404, 'no waiting Session for this relay');
        return;
      }
      serve(ws, env, session, binding);
    });
  }

  function serve(ws: WebSocket, env: VoiceEnvironment, session: SessionRecord, binding: RelayBinding): void {
    const relay = new SocketRelay(binding.id, env.id, session.key, binding.nodeId, ws);
    relays.add(relay);
    let complained = false;
    let overflowed = false;
    const turn = (type: TurnType, payload: unknown, lang: unknown) => {
      if (relay.turnsWaiting < TURNS_WAITING) return queueTurn(relay, session, type, payload, lang);
      if (overflowed) return;
      // Once per relay, as for bad frames.
      overflowed = true;
      env.node.warn(runtimeText(red, 'voice', 'runtime.log.relayTurnsDropped', { call: session.key, max: TURNS_WAITING }));
    };
    ws.on('error', () => undefined);
    ws.on('close', () => {
      relay.closed = true;
      relays.remove(relay);
    });
    ws.on('message', (data: RawData, isBinary: boolean) => {
      // A closing socket still delivers what the caller sent before our close arrived: no turn for it.
      if (relay.closed) return;
      let frame: Record<string, unknown> | undefined;
      try {
        frame = isBinary ? undefined : (JSON.parse(Buffer.isBuffer(data) ? data.toString('utf8') : '') as Record<string, unknown>);
      } catch {
        frame = undefined;
      }
      const known = frame && typeof frame === 'object' && handle(relay, frame, turn);
      if (!known && !complained) {
        // Once per relay: a flood of bad frames must not flood the log.
        complained = true;
        env.node.warn(runtimeText(red, 'voice', 'runtime.log.relayUnknownMessage', { call: session.key }));
      }
    });
  }

  /**
   * One provider message; false when it has no type. A type the package does not model (the
   * relay's newer events, such as `configUpdated`) goes to the flow whole, as a turn of that type.
   */
  function handle(relay: SocketRelay, frame: Record<string, unknown>, turn: (type: TurnType, payload: unknown, lang: unknown) => void): boolean {
    switch (frame.type) {
      case 'setup':
      case 'info':
        return true;
      case 'prompt':
        // Partial prompts (`last: false`) are not turns: the caller is still talking.
        if (frame.last === true) turn('prompt', textOf(frame.voicePrompt), frame.lang);
        return true;
      case 'dtmf':
        turn('dtmf', textOf(frame.digit), frame.lang);
        return true;
      case 'interrupt':
        turn('interrupt', textOf(frame.utteranceUntilInterrupt), frame.lang);
        return true;
      case 'error': {
        const env = voice.environments.get(relay.environment);
        env?.node.warn(
          runtimeText(red, 'voice', 'runtime.log.relayProviderError', {
            callSid: relay.callSid,
            description: textOf(frame.description) || runtimeText(red, 'voice', 'runtime.log.anError'),
          }),
        );
        return true;
      }
      default:
        if (typeof frame.type !== 'string' || !frame.type || frame.type.length > MAX_TYPE) return false;
        turn(frame.type, frame, frame.lang);
        return true;
    }
  }

  /**
   * A turn goes to the flow only while the relay's Session lives. Ended on another instance (the
   * End button there, its idle expiry taken there), nothing told this one, which holds the socket:
   * the store says so, and the relay closes as it would have here. One read per turn, none per
   * frame; turns wait for it in line, so the flow gets them in the caller's order (and an
   * interrupt drops the answers of exactly the turns before it).
   */
  function queueTurn(relay: SocketRelay, session: SessionRecord, type: TurnType, payload: unknown, lang: unknown): void {
    relay.turnsWaiting++;
    relay.turnsInLine = relay.turnsInLine
      .then(async () => {
        if (!(await sessionLives(relay, session)) && !relay.closed) relays.close(relay, 1000, 'the Session ended');
        if (relay.closed) return;
        if (type === 'interrupt') relay.interrupted();
        emitTurn(relay, session, type, payload, lang);
      })
      .catch((err: Error) => red.log.error(`[channel-sessions] ${runtimeText(red, 'voice', 'runtime.log.relayFailed', { message: err.message })}`))
      .finally(() => relay.turnsWaiting--);
  }

  /** Whether the store still holds the relay's Session live; a store that cannot say leaves the call talking. */
  async function sessionLives(relay: SocketRelay, session: SessionRecord): Promise<boolean> {
    try {
      return (await engine.liveSessionFor(relay.environment, relay.callSid))?.id === session.id;
    } catch {
      return true;
    }
  }

  /** A caller's turn (or a provider message of its own type) out of the AI agent node's output 3, with the Session as it waits. */
  function emitTurn(relay: SocketRelay, session: SessionRecord, type: TurnType, payload: unknown, lang: unknown): void {
    const node = red.nodes.getNode(relay.nodeId) as { send(msgs: unknown[]): void } | null;
    if (!node) {
      relays.remove(relay);
      relay.closed = true;
      relay.ws.close(1001, 'the AI agent node is not deployed');
      return;
    }
    const msgid = red.util.generateId();
    relay.emitted(msgid);
    const msg = {
      _msgid: msgid,
      session: sessionRef(session),
      vars: structuredClone(session.vars),
      payload,
      agent: { relayId: relay.id, type, lang: typeof lang === 'string' ? lang : '' },
    };
    node.send([null, null, msg]);
  }
}

/** The relay the Session's waiting AI agent Task opened, if it waits at one. */
export function relayOf(session: SessionRecord | undefined): RelayBinding | undefined {
  if (!session || session.state !== 'waiting' || session.waitingAt?.nodeType !== AGENT_TYPE) return undefined;
  const binding = session.binding.agentRelay as RelayBinding | undefined;
  return binding && typeof binding.id === 'string' ? binding : undefined;
}

/**
 * The provider signs the upgrade over the `wss://` URL it was given, with no form fields. Undefined
 * when the signature holds (or signatures are off), else why it does not.
 */
function checkRelaySignature(red: RED, env: VoiceEnvironment, req: IncomingMessage): string | undefined {
  if (!env.validateSignatures) return undefined;
  if (missingCredentials(env).includes('Auth Token') && !env.credentials.webhookSigningSecret) return runtimeText(red, 'voice', 'runtime.log.signatureNoKey');
  const key = env.credentials.webhookSigningSecret || env.credentials.authToken;
  const header = req.headers['x-twilio-signature'];
  const signature = Array.isArray(header) ? header[0] : header;
  if (!signature) return runtimeText(red, 'voice', 'runtime.log.signatureMissing');
  const url = toWebSocketScheme(calledUrl(req as HttpRequest, env.publicBaseUrl, red.settings.httpNodeRoot));
  return isSignedByTwilio(key, signature, url, {}) ? undefined : runtimeText(red, 'voice', 'runtime.log.signatureMismatch', { url });
}

/** A frame field as text; anything but a string or number is none. */
function textOf(value: unknown): string {
  return typeof value === 'string' ? value : typeof value === 'number' ? String(value) : '';
}
