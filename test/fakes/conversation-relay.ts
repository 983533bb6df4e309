import twilio from 'twilio';
import WebSocket from 'ws';
import { AUTH_TOKEN } from './twilio-voice-caller';

/** A frame the package sent on the relay (`text`, `play`, `sendDigits`, `end`). */
export type SentFrame = Record<string, any> & { type: string };

export interface RelayOptions {
  /** The key Twilio signs with (the Auth Token, or the Webhook Signing Secret). */
  signingKey?: string;
  /** A signature to send as it is (a forged one), instead of the right one. */
  signature?: string;
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
   * (`http://127.0.0.1:<port>`). Resolves once open; rejects with the HTTP status of a refused upgrade.
   */
  static connect(nodeRedOrigin: string, relayUrl: string, options: RelayOptions = {}): Promise<FakeConversationRelay> {
    const target = new URL(relayUrl);
    const local = nodeRedOrigin.replace(/^http/, 'ws').replace(/\/+$/, '') + target.pathname + target.search;
    const signature = options.signature ?? twilio.getExpectedTwilioSignature(options.signingKey ?? AUTH_TOKEN, relayUrl, {});
    const ws = new WebSocket(local, { headers: { 'X-Twilio-Signature': signature } });
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
