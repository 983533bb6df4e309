import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

/** One request the fake REST API received, as the real twilio client sent it. */
export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  form: Record<string, string>;
  /** Account SID and Auth Token from the Basic Authorization header. */
  username: string;
  password: string;
}

/**
 * A fake Twilio REST API on loopback for the voice module: the incoming phone number resource
 * (`IncomingPhoneNumbers/{PN}.json`), enough for auto-deploy. Every request is recorded.
 */
export class FakeTwilioApi {
  readonly requests: ReceivedRequest[] = [];
  /** Phone numbers the account owns: sid -> resource fields. */
  readonly numbers = new Map<string, Record<string, string>>();
  private server: Server | undefined;
  port = 0;

  static async start(): Promise<FakeTwilioApi> {
    const api = new FakeTwilioApi();
    api.server = createServer((req, res) => void api.handle(req, res));
    await new Promise<void>((resolve) => api.server!.listen(0, '127.0.0.1', resolve));
    api.port = (api.server.address() as { port: number }).port;
    return api;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  addNumber(sid: string, phoneNumber: string): void {
    this.numbers.set(sid, { sid, phone_number: phoneNumber, voice_url: '', voice_method: 'POST', status_callback: '' });
  }

  async close(): Promise<void> {
    if (!this.server) return;
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server!.close(resolve));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const url = new URL(req.url ?? '/', this.url);
    const form = Object.fromEntries(new URLSearchParams(Buffer.concat(chunks).toString('utf8')));
    const [username, password] = Buffer.from(String(req.headers.authorization ?? '').replace(/^Basic /, ''), 'base64')
      .toString()
      .split(':');
    this.requests.push({ method: req.method ?? '', path: url.pathname, headers: req.headers, form, username: username ?? '', password: password ?? '' });

    const number = /^\/2010-04-01\/Accounts\/(AC\w+)\/IncomingPhoneNumbers\/(PN\w+)\.json$/.exec(url.pathname);
    if (number && req.method === 'POST') {
      const resource = this.numbers.get(number[2]);
      if (!resource) return this.error(res, 404, 20404, `The requested resource ${url.pathname} was not found`);
      if (form.VoiceUrl !== undefined) resource.voice_url = form.VoiceUrl;
      if (form.VoiceMethod !== undefined) resource.voice_method = form.VoiceMethod;
      if (form.StatusCallback !== undefined) resource.status_callback = form.StatusCallback;
      return this.json(res, 200, { account_sid: number[1], ...resource });
    }
    this.error(res, 404, 20404, `The requested resource ${url.pathname} was not found`);
  }

  private json(res: ServerResponse, status: number, body: unknown): void {
    res.writeHead(status, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify(body));
  }

  private error(res: ServerResponse, status: number, code: number, message: string): void {
    this.json(res, status, { code, message, more_info: `https://www.twilio.com/docs/errors/${code}`, status });
  }
}
