import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { endlessAnswer } from './endless-answer';

/** One request the fake received, as a test asserts on it. */
export interface RecordedRequest {
  method: string;
  path: string;
  /** Form fields; repeated keys (MediaUrl) become arrays. */
  form: Record<string, string | string[]>;
  authorization: string | undefined;
  /** The fault this request met instead of being served (see `inject`, `injectMedia`). */
  fault?: MediaFault | SendFault;
  /** An `endless` answer: whether the client closed the connection before its end. */
  closedEarly?: boolean;
  /** When it arrived (ms since the epoch). */
  at: number;
  /** The MessageSid the fake answered a served send with. */
  sid?: string;
  /** The Twilio error code a send was refused with (a `rejectTo` number, a Body over the limit). */
  refused?: number;
}

/** Twilio refuses a message whose Body is longer than this many characters, with error 21617. */
export const BODY_LIMIT = 1600;

/**
 * What the fake does to a message send instead of serving it: answer an error status (with
 * Retry-After, a Twilio error body whose message may quote the request's form), reset the
 * connection once the request arrived, or hold the answer back for `holdMs` (then send the
 * message and answer 201, as a slow Twilio would). A send may also meet `neverAnswered` (nothing
 * made, no answer ever) or `madeThenHeld` (the message made, in the list, and no answer ever), as
 * when the sender dies waiting.
 */
export type ApiFault =
  | { status: number; retryAfter?: string; code?: number; message?: string | ((form: Record<string, string | string[]>) => string) }
  | { reset: true }
  | { holdMs: number };

/** What a message send may meet (see `inject`): an ApiFault, `endless`: 201 with a body that does not end (endless-answer.ts), `neverAnswered` or `madeThenHeld`. */
export type SendFault = ApiFault | { endless: true } | { neverAnswered: true } | { madeThenHeld: true };

/** A message the fake made, as its Messages list gives it. */
export interface MadeMessage {
  sid: string;
  to: string;
  from: string;
  body: string;
  numMedia: number;
  /** ms since the epoch. */
  created: number;
  /** Still queued at the provider: not sent yet, so it has no date sent (and no day a DateSent filter finds). */
  queued?: boolean;
}

/**
 * What the fake does to a media GET (on the account's media address or on the CDN) instead of
 * serving it: an ApiFault (a hold serves it late), or `cutOff`: the file's headers promise its whole
 * length, half the bytes come, then the connection is dropped; or `trickleMs`: the whole file, in
 * 10 pieces `trickleMs` apart (a host that never stalls long, yet never finishes in time).
 */
export type MediaFault = ApiFault | { cutOff: true } | { trickleMs: number };

/** Which address of a media download a fault is for: the provider's media address, or the CDN it redirects to. */
export type MediaLeg = 'media' | 'cdn';

/** One GET the CDN received. */
export interface CdnRequest {
  path: string;
  authorization: string | undefined;
  fault?: MediaFault;
  at: number;
}

export interface FakeMedia {
  data: Buffer;
  type: string;
}

export interface FakeService {
  sid: string;
  inboundRequestUrl: string | null;
  inboundMethod: string;
  useInboundWebhookOnNumber: boolean;
}

/**
 * A fake of the parts of Twilio's REST API the messaging module uses, on 127.0.0.1, reached by the
 * real `twilio` client through the Environment's `apiUrl`. It checks basic auth like Twilio,
 * records every request, refuses numbers it is told to and a Body over 1600 characters (error
 * 21617) with a RestException body, serves media at the account's media path behind basic auth
 * with a redirect to a second loopback "CDN" server, and records what that CDN saw (it must never
 * see an Authorization header).
 */
export class FakeTwilioMessagingApi {
  readonly requests: RecordedRequest[] = [];
  readonly cdnRequests: CdnRequest[] = [];
  readonly services = new Map<string, FakeService>();
  /** `To` numbers the API refuses with error 21211. */
  readonly rejectTo = new Set<string>();
  /** Faults waiting for the next sends to a `To` number, one per request, in order. */
  private readonly faults = new Map<string, SendFault[]>();
  private readonly media = new Map<string, FakeMedia>();
  /** `<leg>:<mediaSid>` -> faults for the next GETs of that media on that leg, one each, in order. */
  private readonly mediaFaults = new Map<string, MediaFault[]>();
  /** Every message made, in order: what GET …/Messages.json lists. */
  readonly made: MadeMessage[] = [];
  /** Faults waiting for the next GETs of the Messages list, one per request, in order. */
  private readonly listFaults: ApiFault[] = [];
  /** Answers `neverAnswered` and `madeThenHeld` keep back, ended when the fake closes. */
  private readonly heldAnswers: ServerResponse[] = [];
  private api: Server | undefined;
  private cdn: Server | undefined;
  private messageCounter = 0;

  constructor(
    readonly accountSid: string,
    readonly authToken: string,
  ) {}

  static async start(accountSid: string, authToken: string): Promise<FakeTwilioMessagingApi> {
    const fake = new FakeTwilioMessagingApi(accountSid, authToken);
    fake.api = await listen((req, res) => fake.handleApi(req, res));
    fake.cdn = await listen((req, res) => fake.handleCdn(req, res));
    return fake;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.api?.address() as AddressInfo).port}`;
  }

  get cdnUrl(): string {
    return `http://127.0.0.1:${(this.cdn?.address() as AddressInfo).port}`;
  }

  /** Media the provider holds for an inbound message; returns its MediaUrl under this fake. */
  addMedia(messageSid: string, mediaSid: string, media: FakeMedia, accountSid = this.accountSid): string {
    this.media.set(mediaSid, media);
    return `${this.url}/2010-04-01/Accounts/${accountSid}/Messages/${messageSid}/Media/${mediaSid}`;
  }

  /** The next sends to `to` meet these faults, one each, before sends are served again. */
  inject(to: string, ...faults: SendFault[]): void {
    this.faults.set(to, [...(this.faults.get(to) ?? []), ...faults]);
  }

  /** The next GETs of the Messages list meet these faults, one each, before it is served again. */
  injectList(...faults: ApiFault[]): void {
    this.listFaults.push(...faults);
  }

  /** Every GET of the Messages list, faulted or not, in order. */
  listRequests(): RecordedRequest[] {
    return this.requests.filter((r) => r.method === 'GET' && r.path.endsWith('/Messages.json'));
  }

  /** The next GETs of `mediaSid` on `leg` meet these faults, one each, before it is served again. */
  injectMedia(mediaSid: string, leg: MediaLeg, ...faults: MediaFault[]): void {
    const key = `${leg}:${mediaSid}`;
    this.mediaFaults.set(key, [...(this.mediaFaults.get(key) ?? []), ...faults]);
  }

  /** Every GET of `mediaSid` on `leg`, faulted or not, in order. */
  mediaGets(mediaSid: string, leg: MediaLeg): Array<RecordedRequest | CdnRequest> {
    if (leg === 'cdn') return this.cdnRequests.filter((r) => r.path === `/cdn/${mediaSid}`);
    return this.requests.filter((r) => r.method === 'GET' && r.path.endsWith(`/Media/${mediaSid}`));
  }

  /** Every send attempt to `to` (POST …/Messages.json), faulted or not, in order. */
  attemptsTo(to: string): RecordedRequest[] {
    return this.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/Messages.json') && r.form.To === to);
  }

  /** Messages sent (POST …/Messages.json the fake made: neither faulted nor refused, or made and never answered), in order. */
  messages(): Array<Record<string, string | string[]>> {
    return this.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/Messages.json') && r.sid).map((r) => r.form);
  }

  /** The MessageSids of the messages sent to `to`, in order. */
  sidsTo(to: string): string[] {
    return this.attemptsTo(to)
      .map((r) => r.sid)
      .filter((sid): sid is string => !!sid);
  }

  messagesTo(to: string): Array<Record<string, string | string[]>> {
    return this.messages().filter((m) => m.To === to);
  }

  async close(): Promise<void> {
    for (const res of this.heldAnswers.splice(0)) res.destroy();
    for (const server of [this.api, this.cdn]) {
      if (!server) continue;
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  }

  private async handleApi(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await readBody(req);
    const url = new URL(req.url ?? '/', 'http://fake');
    const form = req.method === 'GET' ? parseRepeated(url.search.slice(1)) : parseRepeated(raw);
    const recorded: RecordedRequest = { method: req.method ?? '', path: url.pathname, form, authorization: req.headers.authorization, at: Date.now() };
    this.requests.push(recorded);
    const mediaMatch = /^\/2010-04-01\/Accounts\/(AC\w+)\/Messages\/(\w+)\/Media\/(\w+)$/.exec(url.pathname);
    if (mediaMatch && req.method === 'GET') {
      if (!this.authorised(req) || mediaMatch[1] !== this.accountSid) return json(res, 401, restError(20003, 'Authenticate', 401));
      const media = this.media.get(mediaMatch[3]);
      if (!media) return json(res, 404, restError(20404, 'The requested resource was not found', 404));
      const fault = await this.meetMediaFault('media', mediaMatch[3], recorded, req, res);
      if (fault === 'answered') return;
      if (fault) return servePoorly(res, media, fault);
      res.writeHead(302, { Location: `${this.cdnUrl}/cdn/${mediaMatch[3]}?Expires=123&Signature=abc` }).end();
      return;
    }
    if (!this.authorised(req)) return json(res, 401, restError(20003, 'Authenticate', 401));
    const messages = /^\/2010-04-01\/Accounts\/(AC\w+)\/Messages\.json$/.exec(url.pathname);
    if (messages && req.method === 'GET') return this.list(messages[1], form, recorded, req, res);
    if (messages && req.method === 'POST') {
      const to = String(form.To ?? '');
      const fault = this.faults.get(to)?.shift();
      if (fault && 'holdMs' in fault) {
        await new Promise((r) => setTimeout(r, fault.holdMs));
      } else if (fault && 'madeThenHeld' in fault) {
        recorded.fault = fault;
      } else if (fault && 'neverAnswered' in fault) {
        recorded.fault = fault;
        this.heldAnswers.push(res);
        return;
      } else if (fault) {
        recorded.fault = fault;
        if ('reset' in fault) {
          req.socket.resetAndDestroy();
          return;
        }
        if ('endless' in fault) {
          recorded.closedEarly = await endlessAnswer(res, 201, `{"sid":"SM${'e'.repeat(32)}","to":${JSON.stringify(to)},"status":"queued","padding":"`);
          return;
        }
        if (fault.retryAfter) res.setHeader('Retry-After', fault.retryAfter);
        const message = typeof fault.message === 'function' ? fault.message(form) : fault.message;
        return json(res, fault.status, restError(fault.code ?? 20000 + fault.status, message ?? 'Service is unavailable', fault.status));
      }
      if (this.rejectTo.has(to)) {
        recorded.refused = 21211;
        return json(res, 400, restError(21211, `The 'To' number ${to} is not a valid phone number.`, 400));
      }
      if (typeof form.Body === 'string' && form.Body.length > BODY_LIMIT) {
        recorded.refused = 21617;
        return json(res, 400, restError(21617, `The concatenated message body exceeds the ${BODY_LIMIT} character limit.`, 400));
      }
      this.messageCounter += 1;
      const sid = `SM${String(this.messageCounter).padStart(32, '0')}`;
      recorded.sid = sid;
      const numMedia = Array.isArray(form.MediaUrl) ? form.MediaUrl.length : form.MediaUrl ? 1 : 0;
      this.made.push({ sid, to, from: String(form.From ?? ''), body: String(form.Body ?? ''), numMedia, created: recorded.at });
      if (fault && 'madeThenHeld' in fault) {
        this.heldAnswers.push(res);
        return;
      }
      return json(res, 201, {
        sid,
        account_sid: messages[1],
        to,
        from: form.From,
        body: form.Body ?? '',
        status: 'queued',
        num_media: String(Array.isArray(form.MediaUrl) ? form.MediaUrl.length : form.MediaUrl ? 1 : 0),
        direction: 'outbound-api',
        date_created: new Date().toUTCString(),
        uri: `${url.pathname.slice(0, -5)}/${sid}.json`,
      });
    }
    const service = /^\/v1\/Services\/(MG\w+)$/.exec(url.pathname);
    if (service) {
      const found = this.services.get(service[1]);
      if (!found) return json(res, 404, restError(20404, 'The requested resource was not found', 404));
      if (req.method === 'POST') {
        if (typeof form.InboundRequestUrl === 'string') found.inboundRequestUrl = form.InboundRequestUrl;
        if (typeof form.InboundMethod === 'string') found.inboundMethod = form.InboundMethod;
        if (typeof form.UseInboundWebhookOnNumber === 'string') found.useInboundWebhookOnNumber = form.UseInboundWebhookOnNumber === 'true';
      }
      return json(res, 200, {
        sid: found.sid,
        account_sid: this.accountSid,
        friendly_name: 'fake service',
        inbound_request_url: found.inboundRequestUrl,
        inbound_method: found.inboundMethod,
        use_inbound_webhook_on_number: found.useInboundWebhookOnNumber,
        url: `https://messaging.twilio.com/v1/Services/${found.sid}`,
      });
    }
    json(res, 404, restError(20404, 'The requested resource was not found', 404));
  }

  /**
   * GET …/Messages.json as Twilio pages it: newest first, filtered by `To`, `From` and the day the
   * message was sent (`DateSent`, `DateSent>` on or after, `DateSent<` on or before: Twilio reads
   * only the date), `PageSize` a page, `next_page_uri` to the next (its `Page` and `PageToken`). A
   * queued message has no date sent: a DateSent filter leaves it out, and it comes first otherwise.
   */
  private async list(
    account: string,
    query: Record<string, string | string[]>,
    recorded: RecordedRequest,
    req: IncomingMessage,
    res: ServerResponse,
  ): Promise<void> {
    const fault = this.listFaults.shift();
    if (fault && 'holdMs' in fault) await new Promise((r) => setTimeout(r, fault.holdMs));
    else if (fault) {
      recorded.fault = fault;
      if ('reset' in fault) return void req.socket.resetAndDestroy();
      if (fault.retryAfter) res.setHeader('Retry-After', fault.retryAfter);
      const message = typeof fault.message === 'function' ? fault.message(query) : fault.message;
      return json(res, fault.status, restError(fault.code ?? 20000 + fault.status, message ?? 'Service is unavailable', fault.status));
    }
    const one = (name: string) => (typeof query[name] === 'string' ? query[name] : undefined);
    const dayOf = (value: string | undefined) => value?.slice(0, 10);
    const [on, after, before] = [dayOf(one('DateSent')), dayOf(one('DateSent>')), dayOf(one('DateSent<'))];
    const listed = this.made
      .filter((m) => {
        const day = new Date(m.created).toISOString().slice(0, 10);
        if (one('To') !== undefined && m.to !== one('To')) return false;
        if (one('From') !== undefined && m.from !== one('From')) return false;
        if ((on || after || before) && m.queued) return false;
        return (!on || day === on) && (!after || day >= after) && (!before || day <= before);
      })
      .reverse()
      .sort((a, b) => Number(!!b.queued) - Number(!!a.queued));
    const size = Math.max(1, Math.min(Number(one('PageSize')) || 50, 1000));
    const page = Number(one('Page')) || 0;
    const start = Number(one('PageToken')?.replace(/^PA/, '')) || page * size;
    const items = listed.slice(start, start + size);
    const path = `/2010-04-01/Accounts/${account}/Messages.json`;
    const next = new URLSearchParams(Object.entries(query).filter(([k]) => !['Page', 'PageToken'].includes(k)) as Array<[string, string]>);
    next.set('Page', String(page + 1));
    next.set('PageToken', `PA${start + size}`);
    json(res, 200, {
      messages: items.map((m) => ({
        sid: m.sid,
        account_sid: account,
        to: m.to,
        from: m.from,
        body: m.body,
        status: m.queued ? 'queued' : 'sent',
        num_media: String(m.numMedia),
        direction: 'outbound-api',
        date_created: new Date(m.created).toUTCString(),
        date_sent: m.queued ? null : new Date(m.created).toUTCString(),
      })),
      page,
      page_size: size,
      uri: `${path}?${new URLSearchParams(query as Record<string, string>).toString()}`,
      next_page_uri: start + size < listed.length ? `${path}?${next.toString()}` : null,
    });
  }

  private async handleCdn(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://cdn');
    const recorded: CdnRequest = { path: url.pathname, authorization: req.headers.authorization, at: Date.now() };
    this.cdnRequests.push(recorded);
    const mediaSid = url.pathname.replace('/cdn/', '');
    const media = this.media.get(mediaSid);
    if (!media) {
      res.writeHead(404).end();
      return;
    }
    const fault = await this.meetMediaFault('cdn', mediaSid, recorded, req, res);
    if (fault === 'answered') return;
    if (fault) return servePoorly(res, media, fault);
    res.writeHead(200, { 'Content-Type': media.type, 'Content-Length': media.data.length }).end(media.data);
  }

  /**
   * Applies the next injected fault of a media GET: 'answered' when the fault was the whole answer
   * (a status, a reset); a `cutOff` for the caller to cut its answer short; else it is served (a
   * hold first waits).
   */
  private async meetMediaFault(
    leg: MediaLeg,
    mediaSid: string,
    recorded: { fault?: MediaFault | SendFault },
    req: IncomingMessage,
    res: ServerResponse,
  ): Promise<'answered' | { cutOff: true } | { trickleMs: number } | undefined> {
    const fault = this.mediaFaults.get(`${leg}:${mediaSid}`)?.shift();
    if (!fault) return undefined;
    recorded.fault = fault;
    if ('holdMs' in fault) {
      await new Promise((r) => setTimeout(r, fault.holdMs));
      return undefined;
    }
    if ('cutOff' in fault || 'trickleMs' in fault) return fault;
    if ('reset' in fault) {
      req.socket.resetAndDestroy();
      return 'answered';
    }
    if (fault.retryAfter) res.setHeader('Retry-After', fault.retryAfter);
    const message = typeof fault.message === 'function' ? fault.message({}) : fault.message;
    if (leg === 'cdn') res.writeHead(fault.status, { 'Content-Type': 'text/plain' }).end(message ?? 'unavailable');
    else json(res, fault.status, restError(fault.code ?? 20000 + fault.status, message ?? 'Service is unavailable', fault.status));
    return 'answered';
  }

  private authorised(req: IncomingMessage): boolean {
    const expected = 'Basic ' + Buffer.from(`${this.accountSid}:${this.authToken}`).toString('base64');
    return req.headers.authorization === expected;
  }
}

/** A file served cut off (half of it, then the connection dropped) or trickling in 10 pieces. */
async function servePoorly(res: ServerResponse, media: FakeMedia, fault: { cutOff: true } | { trickleMs: number }): Promise<void> {
  res.writeHead(200, { 'Content-Type': media.type, 'Content-Length': media.data.length });
  if ('cutOff' in fault) {
    res.write(media.data.subarray(0, Math.floor(media.data.length / 2)), () => setTimeout(() => res.socket?.destroy(), 20));
    return;
  }
  const piece = Math.ceil(media.data.length / 10);
  for (let at = 0; at < media.data.length && !res.destroyed; at += piece) {
    res.write(media.data.subarray(at, at + piece));
    await new Promise((r) => setTimeout(r, fault.trickleMs));
  }
  res.end();
}

function restError(code: number, message: string, status: number) {
  return { code, message, more_info: `https://www.twilio.com/docs/errors/${code}`, status };
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function parseRepeated(raw: string): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [key, value] of new URLSearchParams(raw)) {
    const prior = out[key];
    out[key] = prior === undefined ? value : Array.isArray(prior) ? [...prior, value] : [prior, value];
  }
  return out;
}

function listen(handler: (req: IncomingMessage, res: ServerResponse) => void | Promise<void>): Promise<Server> {
  return new Promise((resolve) => {
    const server = createServer((req, res) => {
      Promise.resolve(handler(req, res)).catch(() => {
        if (!res.headersSent) res.writeHead(500).end();
      });
    });
    server.listen(0, '127.0.0.1', () => resolve(server));
  });
}
