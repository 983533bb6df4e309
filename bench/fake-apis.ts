import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

/** When each reply reached a fake provider API, and to whom; an SMS also from whom, with the sid it was given. */
export interface Delivery {
  at: number;
  to: string;
  from?: string;
  sid?: string;
}

/**
 * Minimal fake Slack Web API and Twilio REST API for the benchmark: they answer what the real
 * clients expect and count the replies delivered. (The tests have fuller fakes.)
 */
export class FakeApis {
  readonly deliveries: Delivery[] = [];
  /** The latest delivery to each address, so a wait does not scan every reply of the run. */
  private readonly latestTo = new Map<string, Delivery>();
  private readonly waiters = new Set<(d: Delivery) => void>();
  private server: Server | undefined;
  port = 0;

  async start(): Promise<void> {
    this.server = createServer((req, res) => this.handle(req, res));
    this.server.keepAliveTimeout = 60000;
    await new Promise<void>((r) => this.server?.listen(0, '127.0.0.1', r));
    this.port = (this.server.address() as { port: number }).port;
  }

  get slackUrl(): string {
    return `http://127.0.0.1:${this.port}/api/`;
  }

  get twilioUrl(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Resolves when a delivery to `to` at or after `since` arrives (or has arrived). */
  waitFor(to: string, since: number, timeoutMs = 10000): Promise<Delivery> {
    const match = (d: Delivery) => d.to === to && d.at >= since;
    const found = this.latestTo.get(to);
    if (found && match(found)) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(waiter);
        reject(new Error('no delivery arrived'));
      }, timeoutMs);
      const waiter = (d: Delivery) => {
        if (!match(d)) return;
        clearTimeout(timer);
        this.waiters.delete(waiter);
        resolve(d);
      };
      this.waiters.add(waiter);
    });
  }

  deliveredSince(t: number): Delivery[] {
    return this.deliveries.filter((d) => d.at >= t);
  }

  private record(d: Delivery): void {
    this.deliveries.push(d);
    this.latestTo.set(d.to, d);
    for (const waiter of [...this.waiters]) waiter(d);
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((r) => this.server?.close(r));
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString();
      const url = req.url ?? '';
      if (url.startsWith('/__deliveries')) {
        const since = Number(new URL(url, 'http://x').searchParams.get('since') ?? 0);
        return json(res, 200, this.deliveredSince(since));
      }
      if (url.startsWith('/__wait')) {
        const q = new URL(url, 'http://x').searchParams;
        const to = q.get('to') ?? '';
        const since = Number(q.get('since') ?? 0);
        this.waitFor(to, since).then(
          (d) => json(res, 200, d),
          () => json(res, 504, {}),
        );
        return;
      }
      if (url.startsWith('/api/')) return this.slack(url.slice(5).split('?')[0], body, req, res);
      // A call out: the call JSON the package's client reads (its sid and status), counted like a reply.
      if (/^\/2010-04-01\/Accounts\/AC\w+\/Calls\.json$/.test(url) && req.method === 'POST') {
        const params = new URLSearchParams(body);
        this.record({ at: Date.now(), to: params.get('To') ?? '' });
        return json(res, 201, {
          sid: `CA${Math.random().toString(16).slice(2).padEnd(32, '0')}`,
          status: 'queued',
          direction: 'outbound-api',
          to: params.get('To'),
          from: params.get('From'),
        });
      }
      if (/\/Messages\.json$/.test(url)) {
        const params = new URLSearchParams(body);
        const sid = `SM${Math.random().toString(16).slice(2).padEnd(32, '0')}`;
        this.record({ at: Date.now(), to: params.get('To') ?? '', from: params.get('From') ?? '', sid });
        return json(res, 201, {
          sid,
          status: 'queued',
          to: params.get('To'),
          from: params.get('From'),
          body: params.get('Body'),
        });
      }
      json(res, 200, {});
    });
  }

  private slack(method: string, body: string, req: IncomingMessage, res: ServerResponse): void {
    const scopes = 'chat:write,im:history,app_mentions:read,channels:history,groups:history';
    res.setHeader('x-oauth-scopes', scopes);
    if (method === 'chat.postMessage') {
      const params = req.headers['content-type']?.includes('json') ? JSON.parse(body || '{}') : Object.fromEntries(new URLSearchParams(body));
      this.record({ at: Date.now(), to: String(params.channel ?? '') });
      return json(res, 200, { ok: true, channel: params.channel, ts: `${Date.now() / 1000}` });
    }
    if (method === 'auth.test') return json(res, 200, { ok: true, user_id: 'UBOT', bot_id: 'BBOT', team_id: 'TBENCH', user: 'bench-bot' });
    json(res, 200, { ok: true });
  }
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(body));
}
