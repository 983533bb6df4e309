import { textOf } from '../model/text';
import type { RED } from '../model/red';
import { runtimeText } from '../model/texts';
import { LogLevel, SocketModeClient, type Logger, type SocketModeOptions } from '@slack/socket-mode';
import type { ReceiveOptions } from './receive';
import { slackFetch } from './slack-fetch';

export type SocketState = 'connecting' | 'connected' | 'reconnecting' | 'refused';

/** What a connection needs from its Environment. */
export interface SocketModeHooks {
  /** The module's one entry for a payload; the envelope is acknowledged once it resolves. */
  receive(payload: Record<string, unknown>, options: ReceiveOptions): Promise<void>;
  /** Every change of state, with what caused it (and, when refused, the short reason for the status). */
  state(state: SocketState, detail: string, short?: string): void;
  /** The runtime whose language the details are said in. */
  red: RED;
  debug: (line: string) => void;
}

/** apps.connections.open errors that retrying will not cure: the token, or Socket Mode being off in the app. */
const BAD_TOKEN: ReadonlySet<string> = new Set([
  'invalid_auth',
  'not_authed',
  'not_allowed_token_type',
  'missing_scope',
  'no_permission',
  'token_revoked',
  'token_expired',
  'account_inactive',
  'user_removed_from_team',
  'team_disabled',
]);
const SOCKET_MODE_OFF = 'socket_mode_not_enabled';

/** A refused connection is tried again this often, so turning Socket Mode on in the app is picked up. */
const REFUSED_RETRY_MS = 5 * 60 * 1000;
/** A connection that lasted this long was healthy: the next reconnect starts at once again. */
const STABLE_MS = 30 * 1000;
const MAX_BACKOFF_MS = 30 * 1000;
/** How long a redeploy waits for the old socket's close handshake. */
const CLOSE_WAIT_MS = 3000;

interface Envelope {
  ack(response?: Record<string, unknown>): Promise<void>;
  envelope_id: string;
  type: string;
  body: Record<string, unknown>;
  retry_num?: number;
}

/**
 * One Environment's Socket Mode connection, with Slack's own `SocketModeClient`. It reconnects by
 * itself when Slack asks (a `disconnect` message: refresh, warning) or the connection drops: at
 * once after a healthy connection, then with a growing pause. An envelope is acknowledged only
 * after the module has taken it; one that is not (the connection closed first, or taking it
 * failed) is delivered again by Slack, and the module's dedupe keeps it from running twice.
 */
export class SocketModeConnection {
  private readonly client: GuardedClient;
  private closed = false;
  private connecting = false;
  private attempts = 0;
  private connectedAt = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly onEnvelope = (envelope: Envelope) => this.take(envelope);
  private readonly onDisconnected = () => this.dropped();

  constructor(
    appToken: string,
    apiUrl: string,
    private readonly hooks: SocketModeHooks,
  ) {
    this.client = new GuardedClient(hooks.debug, {
      appToken,
      // Reconnects are ours: the client's own waits 5 s after every drop, and a failed reconnect
      // would reject with nobody listening.
      autoReconnectEnabled: false,
      logger: debugLogger(hooks.debug),
      clientOptions: {
        // The same API as the WebClient (GovSlack, a proxy, an emulator) and the same transport.
        ...(apiUrl ? { slackApiUrl: apiUrl.endsWith('/') ? apiUrl : `${apiUrl}/` } : {}),
        fetch: slackFetch,
        retryConfig: { retries: 0 },
      },
    });
    this.client.on('slack_event', this.onEnvelope);
    this.client.on('disconnected', this.onDisconnected);
  }

  start(): void {
    this.hooks.state('connecting', runtimeText(this.hooks.red, 'teamchat', 'runtime.log.socketOpening'));
    void this.connect();
  }

  /** Redeploy or stop: no reconnect, the socket closed (its unacknowledged envelopes go to the next connection). */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    let waited: NodeJS.Timeout | undefined;
    await Promise.race([this.client.disconnect().catch(() => undefined), new Promise<void>((resolve) => (waited = setTimeout(resolve, CLOSE_WAIT_MS)))]);
    clearTimeout(waited);
    this.client.off('slack_event', this.onEnvelope);
    this.client.off('disconnected', this.onDisconnected);
  }

  private async connect(): Promise<void> {
    if (this.closed) return;
    this.connecting = true;
    try {
      await this.client.start();
    } catch (err) {
      this.connecting = false;
      if (!this.closed) this.failed(err);
      return;
    }
    this.connecting = false;
    if (this.closed) {
      void this.client.disconnect().catch(() => undefined);
      return;
    }
    this.connectedAt = Date.now();
    this.hooks.state('connected', runtimeText(this.hooks.red, 'teamchat', 'runtime.log.socketHello'));
  }

  /** The socket closed after it was open: Slack's refresh or warning, or the network. */
  private dropped(): void {
    if (this.closed || this.connecting) return;
    if (Date.now() - this.connectedAt >= STABLE_MS) this.attempts = 0;
    this.hooks.state('reconnecting', runtimeText(this.hooks.red, 'teamchat', 'runtime.log.socketClosed'));
    this.retry(this.backoff());
  }

  private failed(err: unknown): void {
    const reason = platformError(err);
    if (reason && (BAD_TOKEN.has(reason) || reason === SOCKET_MODE_OFF)) {
      if (reason === SOCKET_MODE_OFF) {
        this.hooks.state(
          'refused',
          runtimeText(this.hooks.red, 'teamchat', 'runtime.log.socketOff'),
          runtimeText(this.hooks.red, 'teamchat', 'runtime.status.socketOff'),
        );
      } else {
        this.hooks.state(
          'refused',
          runtimeText(this.hooks.red, 'teamchat', 'runtime.log.socketBadToken', { reason }),
          runtimeText(this.hooks.red, 'teamchat', 'runtime.status.socketBadToken'),
        );
      }
      this.retry(REFUSED_RETRY_MS);
      return;
    }
    this.hooks.state(
      'reconnecting',
      reason ? runtimeText(this.hooks.red, 'teamchat', 'runtime.log.socketAnswered', { reason }) : describe(this.hooks.red, err),
    );
    this.retry(this.backoff());
  }

  private retry(delayMs: number): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.connect();
    }, delayMs);
  }

  /** 0 for the first reconnect, then 1, 2, 4 … seconds up to 30. */
  private backoff(): number {
    const n = this.attempts++;
    return n === 0 ? 0 : Math.min(MAX_BACKOFF_MS, 1000 * 2 ** (n - 1));
  }

  private take(envelope: Envelope): void {
    // A closing connection leaves the envelope unacknowledged: Slack gives it to the next one.
    if (this.closed) return;
    if (typeof envelope.body !== 'object' || envelope.body === null) {
      this.hooks.debug(`envelope ${envelope.envelope_id} of type ${envelope.type} has no payload; acknowledged, nothing runs`);
      void envelope.ack().catch(() => undefined);
      return;
    }
    const ack = () =>
      envelope.ack().catch((err: Error) => {
        this.hooks.debug(`envelope ${envelope.envelope_id} not acknowledged (${err.message}); Slack delivers it again`);
      });
    if (envelope.type !== 'events_api' && envelope.type !== 'interactive') {
      void ack();
      return;
    }
    this.hooks.receive(envelope.body, { retryNum: Number(envelope.retry_num) || 0 }).then(ack, (err: Error) => {
      this.hooks.debug(`envelope ${envelope.envelope_id} not taken (${err.message}); left unacknowledged for Slack to deliver again`);
    });
  }
}

/**
 * Slack's client, except that a message it cannot read (an `events_api` envelope without an
 * event) is logged: its handler is async and nobody awaits it, so the rejection would stop
 * Node-RED.
 */
class GuardedClient extends SocketModeClient {
  constructor(
    private readonly report: (line: string) => void,
    options: SocketModeOptions,
  ) {
    super(options);
  }

  protected override async onWebSocketMessage(data: string | ArrayBuffer, isBinary: boolean): Promise<void> {
    try {
      await super.onWebSocketMessage(data, isBinary);
    } catch (err) {
      this.report(`a Socket Mode message could not be read (${(err as Error).message}); ignored`);
    }
  }
}

/** The Web API error code of a failed apps.connections.open, if Slack answered one. */
function platformError(err: unknown): string | undefined {
  const e = err as { code?: string; data?: { error?: string } } | undefined;
  return e?.code === 'slack_webapi_platform_error' ? e.data?.error : undefined;
}

function describe(red: RED, err: unknown): string {
  if (err instanceof Error) return err.message;
  return err === undefined ? runtimeText(red, 'teamchat', 'runtime.log.socketNoHello') : textOf(err);
}

/**
 * The client's own lines go to Node-RED's debug level: the connection states are reported by us.
 * They quote apps.connections.open's answer, whose WebSocket URL carries a ticket that opens the
 * connection, and every envelope whole, with its verification token and response_url (which
 * posts to the conversation): those are taken out.
 */
function debugLogger(debug: (line: string) => void): Logger {
  let level = LogLevel.INFO;
  const line = (args: unknown[]) => debug(`[socket mode] ${withoutSecrets(args.map(String).join(' '))}`);
  return {
    debug: (...a: unknown[]) => line(a),
    info: (...a: unknown[]) => line(a),
    warn: (...a: unknown[]) => line(a),
    error: (...a: unknown[]) => line(a),
    setLevel: (l: LogLevel) => {
      level = l;
    },
    getLevel: () => level,
    setName: () => undefined,
  };
}

/** A line of the Slack client with the ticket of a WebSocket URL, and the tokens and response URLs of an envelope, shown as "…". */
function withoutSecrets(line: string): string {
  return line.replace(/([?&]ticket=)[^&"'\s]+/g, '$1…').replace(/("(?:token|response_url)"\s*:\s*)"(?:[^"\\]|\\.)*"/g, '$1"…"');
}
