import { randomBytes } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import twilio from 'twilio';
import WebSocket from 'ws';
import { AUTH_TOKEN } from './twilio-voice-caller';

/** A frame the package sent on the relay (`text`, `play`, `sendDigits`, `end`, or one a flow wrote itself). */
export type SentFrame = Record<string, any> & { type: string };

export interface RelayOptions {
  /** The key Twilio signs with (the Auth Token, or the Webhook Signing Secret). */
  signingKey?: string;
  /** A signature to send as it is (a forged one), instead of the right one. */
  signature?: string;
  /** The CA to trust when Node-RED serves HTTPS itself (`nodeRedOrigin` is then https://). */
  ca?: string | Buffer;
}

/**
 * Plays Twilio's ConversationRelay: opens the WebSocket the TwiML names, its upgrade signed as
 * Twilio signs it (HMAC-SHA1 over the `wss://` URL with no form fields, twilio's own function),
 * but connected to the Node-RED under test on 127.0.0.1 with the same path and query. Sends the
 * provider's messages and keeps what the package sends back, in order.
 */
export class FakeConversationRelay {
  readonly received: SentFrame[] = [];
  readonly closed: Promise<{ code: number; reason: string }>;
  private readonly waiters: Array<() => void> = [];

  private constructor(readonly ws: WebSocket) {
    this.closed = new Promise((resolve) => ws.once('close', (code, reason) => resolve({ code, reason: reason.toString() })));
    ws.on('error', () => undefined);
    ws.on('message', (data) => {
      this.received.push(JSON.parse((data as Buffer).toString('utf8')) as SentFrame);
      for (const wake of this.waiters.splice(0)) wake();
    });
  }

  /**
   * Connects as Twilio would to `relayUrl` (as found in the TwiML), through `nodeRedOrigin`
   * (`http://127.0.0.1:<port>`, or https:// with `ca`). Resolves once open; rejects with the HTTP status of a refused upgrade.
   */
  static connect(nodeRedOrigin: string, relayUrl: string, options: RelayOptions = {}): Promise<FakeConversationRelay> {
    const target = new URL(relayUrl);
    const local = nodeRedOrigin.replace(/^http/, 'ws').replace(/\/+$/, '') + target.pathname + target.search;
    const signature = options.signature ?? twilio.getExpectedTwilioSignature(options.signingKey ?? AUTH_TOKEN, relayUrl, {});
    const ws = new WebSocket(local, { headers: { 'X-Twilio-Signature': signature }, ...(options.ca ? { ca: options.ca } : {}) });
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve(new FakeConversationRelay(ws)));
      ws.once('unexpected-response', (_req, res) => reject(Object.assign(new Error(`upgrade refused: ${res.statusCode}`), { status: res.statusCode })));
      ws.once('error', reject);
    });
  }

  send(message: Record<string, unknown>): void {
    this.ws.send(JSON.stringify(message));
  }

  sendRaw(data: string | Buffer): void {
    this.ws.send(data);
  }

  setup(callSid: string, customParameters: Record<string, string> = {}): void {
    this.send({
      type: 'setup',
      sessionId: 'VX' + '0'.repeat(32),
      accountSid: 'AC' + '1'.repeat(32),
      callSid,
      from: '+14155550123',
      to: '+14155550999',
      direction: 'inbound',
      customParameters,
    });
  }

  prompt(words: string, last = true, lang = 'en-US'): void {
    this.send({ type: 'prompt', voicePrompt: words, lang, last });
  }

  dtmf(digit: string): void {
    this.send({ type: 'dtmf', digit });
  }

  interrupt(utteranceUntilInterrupt: string, durationUntilInterruptMs = 800): void {
    this.send({ type: 'interrupt', utteranceUntilInterrupt, durationUntilInterruptMs });
  }

  /**
   * The GA's event after a `config` message took effect. Its fields are not published, so a test
   * gives them: the package must hand the message on whole, whatever it holds.
   */
  configUpdated(fields: Record<string, unknown> = {}): void {
    this.send({ ...fields, type: 'configUpdated' });
  }

  /** Waits until `count` frames have arrived in all (or the time-out), and returns them all. */
  async frames(count: number, timeoutMs = 5000): Promise<SentFrame[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.received.length < count) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`expected ${count} relay frames, got ${JSON.stringify(this.received)}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return this.received.slice();
  }

  close(): Promise<{ code: number; reason: string }> {
    this.ws.close(1000);
    return this.closed;
  }
}

/**
 * ConversationRelay's side of the WebSocket on a bare TCP socket, its upgrade signed as the
 * provider signs it, for what a WebSocket client does not let a test do: send a frame after the
 * server's close frame arrived and before answering that close with its own (a caller who spoke
 * as the relay was being closed). `onServerClose` runs at that moment; the close is answered after.
 */
export class RawRelaySocket {
  readonly received: SentFrame[] = [];
  readonly closed: Promise<{ code: number; reason: string }>;
  private buffer: Buffer;
  private ended!: (close: { code: number; reason: string }) => void;

  private constructor(
    private readonly socket: Socket,
    rest: Buffer,
    private readonly onServerClose: (socket: RawRelaySocket) => void,
  ) {
    this.buffer = rest;
    this.closed = new Promise((resolve) => (this.ended = resolve));
    socket.on('data', (chunk: Buffer) => {
      this.buffer = Buffer.concat([this.buffer, chunk]);
      this.readFrames();
    });
    socket.on('error', () => undefined);
    this.readFrames();
  }

  /** Opens the relay URL (as found in the TwiML) through `nodeRedOrigin`; rejects with the status of a refused upgrade. */
  static connect(nodeRedOrigin: string, relayUrl: string, onServerClose: (socket: RawRelaySocket) => void): Promise<RawRelaySocket> {
    const origin = new URL(nodeRedOrigin);
    const target = new URL(relayUrl);
    const socket = connect(Number(origin.port), origin.hostname);
    const request = [
      `GET ${target.pathname}${target.search} HTTP/1.1`,
      `Host: ${origin.host}`,
      'Upgrade: websocket',
      'Connection: Upgrade',
      `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}`,
      'Sec-WebSocket-Version: 13',
      `X-Twilio-Signature: ${twilio.getExpectedTwilioSignature(AUTH_TOKEN, relayUrl, {})}`,
    ];
    socket.write(request.join('\r\n') + '\r\n\r\n');
    return new Promise((resolve, reject) => {
      let head = Buffer.alloc(0);
      const onData = (chunk: Buffer) => {
        head = Buffer.concat([head, chunk]);
        const end = head.indexOf('\r\n\r\n');
        if (end < 0) return;
        socket.off('data', onData);
        const status = Number(head.subarray(0, end).toString('latin1').split(' ')[1]);
        if (status !== 101) {
          socket.destroy();
          reject(Object.assign(new Error(`upgrade refused: ${status}`), { status }));
          return;
        }
        resolve(new RawRelaySocket(socket, head.subarray(end + 4), onServerClose));
      };
      socket.on('data', onData);
      socket.once('error', reject);
    });
  }

  prompt(words: string, last = true, lang = 'en-US'): void {
    this.sendRaw(JSON.stringify({ type: 'prompt', voicePrompt: words, lang, last }));
  }

  /** A text frame as it is (not necessarily JSON). */
  sendRaw(text: string): void {
    this.write(0x1, Buffer.from(text));
  }

  /** The server's frames are not masked; text frames are kept, a close frame ends the socket. */
  private readFrames(): void {
    while (this.buffer.length >= 2) {
      const opcode = this.buffer[0] & 0x0f;
      let length = this.buffer[1] & 0x7f;
      let offset = 2;
      if (length === 126) {
        if (this.buffer.length < 4) return;
        length = this.buffer.readUInt16BE(2);
        offset = 4;
      } else if (length === 127) {
        if (this.buffer.length < 10) return;
        length = Number(this.buffer.readBigUInt64BE(2));
        offset = 10;
      }
      if (this.buffer.length < offset + length) return;
      const payload = this.buffer.subarray(offset, offset + length);
      this.buffer = this.buffer.subarray(offset + length);
      if (opcode === 0x1) this.received.push(JSON.parse(payload.toString('utf8')) as SentFrame);
      if (opcode === 0x8) {
        const code = payload.length >= 2 ? payload.readUInt16BE(0) : 1005;
        this.onServerClose(this);
        const answer = Buffer.alloc(2);
        answer.writeUInt16BE(code === 1005 ? 1000 : code);
        this.write(0x8, answer);
        this.socket.end();
        this.ended({ code, reason: payload.subarray(2).toString('utf8') });
        return;
      }
    }
  }

  /** A client frame: final, masked as RFC 6455 requires; short payloads only (a prompt). */
  private write(opcode: number, payload: Buffer): void {
    if (payload.length > 0xffff) throw new Error('RawRelaySocket sends frames of up to 64 KB');
    const mask = randomBytes(4);
    const header =
      payload.length < 126
        ? Buffer.from([0x80 | opcode, 0x80 | payload.length])
        : Buffer.from([0x80 | opcode, 0x80 | 126, payload.length >> 8, payload.length & 0xff]);
    const masked = Buffer.from(payload.map((byte, i) => byte ^ mask[i % 4]));
    this.socket.write(Buffer.concat([header, mask, masked]));
  }
}
