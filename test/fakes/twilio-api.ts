import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import twilio from 'twilio';
import { parseTwiml, AUTH_TOKEN, type CallAnswer } from './twilio-voice-caller';

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

/** A call created through `Calls.json`, with the time the fake received it. */
export interface CreatedCall {
  sid: string;
  form: Record<string, string>;
  at: number;
}

/**
 * How the fake answers a call create: created (201), never (a provider that hangs), 500, a 400
 * refusal, created but its answer held until `releaseHeld()` (the call rings meanwhile, so its
 * answer webhook can be posted before the create's answer arrives), or created but never answered
 * (the call rings although the client gave up on the create); `rejectUrl` refuses it as Twilio
 * refuses a Url it cannot use (error 21205), quoting the Url it was given; `reset` reads the whole
 * request, then closes the connection without a word (the client sees "socket hang up").
 */
export type CallsMode = 'ok' | 'hang' | 'error500' | 'reject400' | 'rejectUrl' | 'held' | 'placedUnanswered' | 'reset';

/**
 * A fake Twilio REST API on loopback for the voice module: the incoming phone number resource
 * (`IncomingPhoneNumbers/{PN}.json`), enough for auto-deploy, and `Calls.json` (calls out), with
 * Twilio's side of a placed call: the signed webhooks to its Url and StatusCallback. Every request
 * is recorded.
 */
export class FakeTwilioApi {
  readonly requests: ReceivedRequest[] = [];
  /** Phone numbers the account owns: sid -> resource fields. */
  readonly numbers = new Map<string, Record<string, string>>();
  readonly calls: CreatedCall[] = [];
  callsMode: CallsMode = 'ok';
  private held: Array<() => void> = [];
  private seq = 0;
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

  /** Sends the answers of the creates held so far. */
  releaseHeld(): void {
    for (const release of this.held.splice(0)) release();
  }

  addNumber(sid: string, phoneNumber: string): void {
    this.numbers.set(sid, { sid, phone_number: phoneNumber, voice_url: '', voice_method: 'POST', status_callback: '' });
  }

  async close(): Promise<void> {
    if (!this.server) return;
    // A create still held would otherwise wait forever for a release no test will send.
    this.releaseHeld();
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

    const create = /^\/2010-04-01\/Accounts\/(AC\w+)\/Calls\.json$/.exec(url.pathname);
    if (create && req.method === 'POST') {
      if (this.callsMode === 'hang') return; // never answers: the client's timeout decides
      if (this.callsMode === 'reset') return void req.socket.destroy();
      if (this.callsMode === 'error500') return this.error(res, 500, 20500, 'Internal Server Error');
      if (this.callsMode === 'reject400') return this.error(res, 400, 21215, 'Account not authorized to call this number');
      if (this.callsMode === 'rejectUrl') return this.error(res, 400, 21205, `Url is not a valid URL: ${form.Url}`);
      const sid = 'CA' + (++this.seq).toString(16).padStart(8, '0') + process.pid.toString(16).padStart(8, '0') + '0'.repeat(16);
      this.calls.push({ sid, form, at: Date.now() });
      if (this.callsMode === 'placedUnanswered') return;
      if (this.callsMode === 'held') await new Promise<void>((release) => this.held.push(release));
      return this.json(res, 201, { sid, account_sid: create[1], to: form.To, from: form.From, status: 'queued', direction: 'outbound-api' });
    }
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

  /** Twilio's side once the person answers: the signed POST to the call's Url (outbound-api). */
  async answer(call: CreatedCall, extra: Record<string, string> = {}): Promise<CallAnswer> {
    return this.signedPost(call.form.Url, { ...this.callParams(call), CallStatus: 'in-progress', ...extra });
  }

  /** A status callback for the call, signed as Twilio signs it. */
  async status(call: CreatedCall, status: string, extra: Record<string, string> = {}): Promise<CallAnswer> {
    return this.signedPost(call.form.StatusCallback, { ...this.callParams(call), CallStatus: status, ...extra });
  }

  callParams(call: CreatedCall): Record<string, string> {
    return {
      AccountSid: 'AC' + '1'.repeat(32),
      ApiVersion: '2010-04-01',
      CallSid: call.sid,
      Direction: 'outbound-api',
      From: call.form.From,
      To: call.form.To,
    };
  }

  async signedPost(url: string, params: Record<string, string>, key = AUTH_TOKEN): Promise<CallAnswer> {
    const signature = twilio.getExpectedTwilioSignature(key, url, params);
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'X-Twilio-Signature': signature },
      body: new URLSearchParams(params).toString(),
    });
    const text = await res.text();
    const contentType = res.headers.get('content-type') ?? '';
    return { status: res.status, text, contentType, verbs: contentType.includes('xml') && text.includes('<Response') ? parseTwiml(text) : [] };
  }

  private json(res: ServerResponse, status: number, body: unknown): void {
    res.writeHead(status, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify(body));
  }

  private error(res: ServerResponse, status: number, code: number, message: string): void {
    this.json(res, status, { code, message, more_info: `https://www.twilio.com/docs/errors/${code}`, status });
  }
}
