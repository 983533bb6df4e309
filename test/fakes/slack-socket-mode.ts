import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocket, WebSocketServer } from 'ws';

/** An acknowledgement the app sent for an envelope. */
export interface Ack {
  envelope_id: string;
  payload?: unknown;
  /** Which connection (1, 2, …) it came on. */
  connection: number;
}

/** An envelope the fake sent. */
export interface SentEnvelope {
  envelope_id: string;
  type: string;
  payload: Record<string, unknown>;
  retry_attempt: number;
  connection: number;
}

/**
 * A fake Slack Socket Mode server on 127.0.0.1, reached through the fake Web API's
 * `apps.connections.open`. Each connection gets Slack's `hello`; the fake sends envelopes shaped
 * like Slack's (`envelope_id`, `type`, `payload`, `accepts_response_payload`, `retry_attempt`,
 * `retry_reason`) and records every acknowledgement. It can ask the app to reconnect (Slack's
 * `disconnect` message) or drop the connection without a close frame, and like Slack it delivers
 * envelopes that were never acknowledged again, on the next connection, with `retry_attempt` + 1.
 */
export class FakeSocketMode {
  readonly acks: Ack[] = [];
  readonly sent: SentEnvelope[] = [];
  /** Connections opened so far (1-based numbers in acks and envelopes). */
  opened = 0;
  /** Tickets handed out by `url()`, and the ones a connection used. */
  readonly tickets: string[] = [];
  readonly usedTickets: string[] = [];
  /** Set false to keep envelopes the app never acknowledged from being delivered again. */
  redeliver = true;
  private readonly open = new Map<number, WebSocket>();
  /** Envelopes delivered again under a new envelope id. */
  private readonly superseded = new Set<string>();
  private readonly waiters = new Map<string, (ack: Ack) => void>();
  private server: Server | undefined;
  private wss: WebSocketServer | undefined;
  private counter = 0;
  port = 0;

  static async start(): Promise<FakeSocketMode> {
    const fake = new FakeSocketMode();
    fake.server = createServer((_req, res) => res.writeHead(404).end());
    fake.wss = new WebSocketServer({ server: fake.server });
    fake.wss.on('connection', (ws, req) => fake.accept(ws, req.url ?? ''));
    await new Promise<void>((r) => fake.server!.listen(0, '127.0.0.1', () => r()));
    fake.port = (fake.server.address() as AddressInfo).port;
    return fake;
  }

  /** A fresh URL, as apps.connections.open returns one per call. */
  url(): string {
    const ticket = `ticket-${++this.counter}`;
    this.tickets.push(ticket);
    return `ws://127.0.0.1:${this.port}/link/?ticket=${ticket}&app_id=A0APP0001`;
  }

  /** How many connections are open now. */
  get live(): number {
    return this.open.size;
  }

  /** The newest open connection's number. */
  get current(): number | undefined {
    return [...this.open.keys()].pop();
  }

  /** Sends an envelope on the newest connection; resolves with its acknowledgement. */
  send(
    type: 'events_api' | 'interactive' | 'slash_commands',
    payload: Record<string, unknown>,
    options: { retryAttempt?: number; timeoutMs?: number } = {},
  ): Promise<Ack> {
    const connection = this.current;
    if (connection === undefined) return Promise.reject(new Error('no open Socket Mode connection'));
    const envelope: SentEnvelope = {
      envelope_id: `env-${++this.counter}-${Math.random().toString(36).slice(2, 10)}`,
      type,
      payload,
      retry_attempt: options.retryAttempt ?? 0,
      connection,
    };
    this.sent.push(envelope);
    const acked = this.ackOf(envelope.envelope_id, options.timeoutMs ?? 5000);
    this.open.get(connection)!.send(
      JSON.stringify({
        envelope_id: envelope.envelope_id,
        type,
        payload,
        accepts_response_payload: type !== 'events_api',
        retry_attempt: envelope.retry_attempt,
        retry_reason: envelope.retry_attempt ? 'timeout' : '',
      }),
    );
    return acked;
  }

  /**
   * What Slack does with an envelope left unacknowledged on an open connection: it sends it again
   * (a new envelope id, `retry_attempt` + 1). Resolves with the acknowledgements of the new ones.
   */
  redeliverUnacknowledged(timeoutMs = 5000): Promise<Ack[]> {
    return Promise.all(
      this.unacknowledged().map((envelope) => {
        this.superseded.add(envelope.envelope_id);
        return this.send(envelope.type as 'events_api', envelope.payload, { retryAttempt: envelope.retry_attempt + 1, timeoutMs });
      }),
    );
  }

  /** Sends text as it is on the newest connection (a message the app cannot read). */
  sendRaw(text: string): void {
    const connection = this.current;
    if (connection === undefined) throw new Error('no open Socket Mode connection');
    this.open.get(connection)!.send(text);
  }

  /** Slack's request to reconnect (`refresh_requested`, `warning`, `link_disabled`). */
  disconnect(reason = 'refresh_requested'): void {
    const connection = this.current;
    if (connection === undefined) throw new Error('no open Socket Mode connection');
    this.open.get(connection)!.send(JSON.stringify({ type: 'disconnect', reason, debug_info: { host: 'applink-fake' } }));
  }

  /** The network drops: the TCP connection ends with no close frame. */
  drop(): void {
    const connection = this.current;
    if (connection === undefined) throw new Error('no open Socket Mode connection');
    this.open.get(connection)!.terminate();
  }

  /** Envelopes sent and never acknowledged. */
  unacknowledged(): SentEnvelope[] {
    return this.sent.filter((e) => !this.superseded.has(e.envelope_id) && !this.acks.some((a) => a.envelope_id === e.envelope_id));
  }

  async close(): Promise<void> {
    for (const ws of this.open.values()) ws.terminate();
    await new Promise<void>((r) => (this.wss ? this.wss.close(() => r()) : r()));
    await new Promise<void>((r) => (this.server ? this.server.close(() => r()) : r()));
  }

  private accept(ws: WebSocket, path: string): void {
    const connection = ++this.opened;
    this.usedTickets.push(new URL(path, 'ws://x').searchParams.get('ticket') ?? '');
    this.open.set(connection, ws);
    ws.on('message', (raw) => {
      let message: { envelope_id?: string; payload?: unknown };
      try {
        message = JSON.parse((raw as Buffer).toString());
      } catch {
        return;
      }
      if (!message.envelope_id) return;
      const ack: Ack = { envelope_id: message.envelope_id, payload: message.payload, connection };
      this.acks.push(ack);
      this.waiters.get(message.envelope_id)?.(ack);
    });
    ws.on('close', () => this.open.delete(connection));
    ws.send(
      JSON.stringify({
        type: 'hello',
        num_connections: this.open.size,
        debug_info: { host: 'applink-fake', approximate_connection_time: 18060 },
        connection_info: { app_id: 'A0APP0001' },
      }),
    );
    if (this.redeliver) {
      for (const envelope of this.unacknowledged().filter((e) => e.connection < connection)) {
        this.superseded.add(envelope.envelope_id);
        void this.send(envelope.type as 'events_api', envelope.payload, { retryAttempt: envelope.retry_attempt + 1 }).catch(() => undefined);
      }
    }
  }

  private ackOf(envelopeId: string, timeoutMs: number): Promise<Ack> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(envelopeId);
        reject(new Error(`envelope ${envelopeId} was not acknowledged within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiters.set(envelopeId, (ack) => {
        clearTimeout(timer);
        this.waiters.delete(envelopeId);
        resolve(ack);
      });
    });
  }
}
