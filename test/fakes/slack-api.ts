import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { endlessAnswer } from './endless-answer';

/** One call the fake Slack Web API received. */
export interface SlackCall {
  method: string;
  body: Record<string, any>;
  /** The bearer token it carried. */
  token: string;
  at: number;
  /** What the fake answered (a posted message's `ts`, for clicks on it). */
  result?: Record<string, any>;
}

/** A POST to a `response_url` (an interactivity answer) on this server. */
export interface ResponseUrlCall {
  path: string;
  body: Record<string, any>;
  token: string;
}

export interface UploadedFile {
  id: string;
  filename: string;
  length: number;
  data: Buffer;
  token: string;
  /** How many upload POSTs carried its bytes (each one served). */
  received?: number;
}

/**
 * What the fake does to a call instead of serving it (see `inject`): answer an error status (with
 * Retry-After), reset the connection once the request arrived, hold the answer back for `holdMs`
 * (then serve it, as a slow Slack would), serve it and cut the answer off mid-body, (`endless`)
 * answer 200 with a body that does not end (endless-answer.ts), (`neverAnswered`) take the request,
 * carry nothing out and never answer, or (`madeThenHeld`) carry the call
 * out (the message is posted) and never answer: the caller dies waiting, as under a `kill -9`.
 */
export type SlackApiFault =
  | { status: number; retryAfter?: string }
  | { reset: true }
  | { holdMs: number }
  | { cutOff: true }
  | { endless: true }
  | { neverAnswered: true }
  | { madeThenHeld: true };

/** One request that reached the fake for a Web API method (or `upload`, the upload POST), faulted or not. */
export interface SlackAttempt {
  method: string;
  channel: string;
  at: number;
  fault?: SlackApiFault;
  /** An `endless` answer: whether the client closed the connection before its end. */
  closedEarly?: boolean;
}

/** One streamed message in the fake. */
export interface FakeStream {
  channel: string;
  threadTs?: string;
  /** What the start, each append and the stop added, in order. */
  parts: string[];
  appends: number;
  open: boolean;
  /** Sealed by the fake (sealAfterAppends), as Slack seals a stream after about 5 minutes. */
  sealed?: boolean;
  /** Stopped by the person's stop button in their agent session (stopAgentSession). */
  stoppedByPerson?: boolean;
  /** The text a chat.update left it with. */
  updated?: string;
  start: Record<string, any>;
  stop?: Record<string, any>;
}

/** A message the bot posted, as the fake keeps it. */
export interface FakeMessage {
  channel: string;
  text: string;
  blocks?: unknown;
  edits: number;
  threadTs?: string;
  /** The `metadata` it was posted with (an effect's key: `event_payload.key`). */
  metadata?: { event_type?: string; event_payload?: Record<string, unknown> };
}

/** The history scope a conversation's messages need, by the first letter of its id (public, private, direct message). */
const HISTORY_SCOPE: Record<string, string> = { C: 'channels:history', G: 'groups:history', D: 'im:history' };

/** A conversation's id (a public channel, a private channel, a direct message), as Slack writes them. */
const CONVERSATION_ID = /^[CDG][A-Z0-9]+$/;
/** A user id (W for Enterprise Grid). */
const USER_ID = /^[UW][A-Z0-9]+$/;

const ALL_SCOPES = 'chat:write,im:history,app_mentions:read,channels:history,groups:history,users:read,files:read,files:write';

/**
 * A fake Slack Web API on 127.0.0.1, reached by the real WebClient through the Environment's
 * `apiUrl`. It records every call, answers like Slack (`x-oauth-scopes` header, `ok:false`
 * errors), runs the filesUploadV2 flow (an upload URL on this server, then completion) and
 * serves private files only to the bot token (anyone else gets Slack's login page). As on Slack,
 * chat.postMessage takes a channel's name (`#general`, in `channelNames`) or a user id and answers
 * the conversation's id, while files.completeUploadExternal takes only an id.
 */
export class FakeSlack {
  readonly calls: SlackCall[] = [];
  readonly uploads = new Map<string, UploadedFile>();
  /** Every GET of a private file, faulted or not (see `injectFile`). */
  readonly fileRequests: Array<{ path: string; token: string; fault?: SlackApiFault; at: number }> = [];
  readonly responses: ResponseUrlCall[] = [];
  /** Socket Mode: the App-Level Token `apps.connections.open` accepts, and whether the app has Socket Mode on. */
  appToken = 'xapp-fake-app-token-for-tests';
  socketModeEnabled = true;
  /** The `ws://` URL `apps.connections.open` hands out (a FakeSocketMode's). */
  socketUrl: (() => string) | undefined;
  /** Sent in `x-oauth-scopes`; undefined sends no header. */
  scopes: string | undefined = ALL_SCOPES;
  botToken = 'xoxb-test_bot_token';
  botUserId = 'UBOT0001';
  botId = 'BBOT0001';
  team = 'T0TEAM01';
  users: Record<string, { name: string; real_name: string; display_name: string }> = {};
  /** A channel's name (without `#`) -> its id, for posts that name the channel. */
  readonly channelNames = new Map<string, string>();
  /** `method` or `method:channel` -> Slack error code for every such call. */
  readonly failures = new Map<string, string>();
  /**
   * Another fake standing in for Slack's file host (files.slack.com, a host of its own): upload
   * URLs point at it, and it receives and keeps the uploads. Undefined: upload URLs are on this one.
   */
  uploadHost: FakeSlack | undefined;
  /** `method` -> a Location the call is redirected to (307) instead of being answered. */
  readonly redirects = new Map<string, string>();
  /** Every request for a Web API method or an upload URL, in order, faulted or not. */
  readonly attempts: SlackAttempt[] = [];
  /** `method`, `method:channel` or `upload` -> faults for the next such requests, one each, in order. */
  private readonly faults = new Map<string, SlackApiFault[]>();
  private readonly files = new Map<string, { data: Buffer; type: string; redirect?: string }>();
  /** A private file's path -> faults for its next GETs, one each, in order. */
  private readonly fileFaults = new Map<string, SlackApiFault[]>();
  private readonly gates = new Map<string, Promise<void>>();
  /** Streamed messages by ts: the text each call added, in order, and whether the stream is still open. */
  readonly streams = new Map<string, FakeStream>();
  /** Stream switches: answer `feature_not_enabled` to chat.startStream; seal a stream after this many appends; refuse a message past this many characters. */
  streaming = { enabled: true, sealAfterAppends: 0, maxChars: 12000 };
  /**
   * Agent sessions (an app declared as an agent in Slack's `agent_view`): whether the app is one
   * (otherwise agents.sessions.setStatus is refused), whether it subscribed to
   * `agent_session_stopped` (otherwise Slack warns), and each thread's statuses in order.
   */
  agents = { agentApp: false, stopSubscribed: true };
  /**
   * Slack's rate-limit tiers, enforced when set: method -> calls a minute per app and workspace
   * (per token here), counted over the last 60 s; a call past it is answered HTTP 429 with the
   * Retry-After that frees a place (and recorded as an attempt with that fault).
   */
  tiers: Record<string, number> | undefined;
  private readonly tierCalls = new Map<string, number[]>();
  readonly agentSessions = new Map<string, string[]>();
  /** Messages by ts as chat.postMessage and chat.update left them (the fallback's edits), with the thread and metadata they were posted with. */
  readonly messages = new Map<string, FakeMessage>();
  private server: Server | undefined;
  /** Answers `neverAnswered` and `madeThenHeld` keep back, ended when the fake closes. */
  private readonly heldAnswers: ServerResponse[] = [];
  private tsCounter = 100;
  private fileCounter = 0;
  port = 0;

  static async start(): Promise<FakeSlack> {
    const fake = new FakeSlack();
    fake.server = createServer((req, res) => void fake.handle(req, res));
    await new Promise<void>((r) => fake.server!.listen(0, '127.0.0.1', () => r()));
    fake.port = (fake.server.address() as AddressInfo).port;
    return fake;
  }

  get origin(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get apiUrl(): string {
    return `${this.origin}/api/`;
  }

  /** A file people share, served behind the bot token at `url_private_download`. */
  addFile(name: string, data: Buffer, type = 'application/octet-stream'): string {
    const path = `/files-pri/${this.team}-F${++this.fileCounter}/${encodeURIComponent(name)}`;
    this.files.set(path, { data, type });
    return `${this.origin}${path}`;
  }

  /** A private file URL that answers with a redirect to `location` (a CDN, or somewhere it must not go). */
  addRedirect(name: string, location: string): string {
    const path = `/files-pri/${this.team}-F${++this.fileCounter}/${encodeURIComponent(name)}`;
    this.files.set(path, { data: Buffer.alloc(0), type: 'text/plain', redirect: location });
    return `${this.origin}${path}`;
  }

  /** Holds every call of `method` until the returned function is called (to show what happens meanwhile). */
  hold(method: string): () => void {
    let release: () => void = () => undefined;
    this.gates.set(method, new Promise<void>((r) => (release = r)));
    return () => {
      this.gates.delete(method);
      release();
    };
  }

  /** The next requests for `key` (`method`, `method:channel`, or `upload` for upload POSTs) meet these faults, one each. */
  inject(key: string, ...faults: SlackApiFault[]): void {
    this.faults.set(key, [...(this.faults.get(key) ?? []), ...faults]);
  }

  /** The next GETs of the private file at `url` (from addFile) meet these faults, one each; a hold serves it late, a cutOff half of it. */
  injectFile(url: string, ...faults: SlackApiFault[]): void {
    const path = new URL(url).pathname;
    this.fileFaults.set(path, [...(this.fileFaults.get(path) ?? []), ...faults]);
  }

  /** GETs of the private file at `url`, faulted or not, in order. */
  fileGets(url: string): Array<{ path: string; token: string; fault?: SlackApiFault; at: number }> {
    const path = new URL(url).pathname;
    return this.fileRequests.filter((r) => r.path === path);
  }

  /** Requests for `method` (optionally to `channel`), faulted or not. */
  attemptsOf(method: string, channel?: string): SlackAttempt[] {
    return this.attempts.filter((a) => a.method === method && (channel === undefined || a.channel === channel));
  }

  callsOf(method: string): SlackCall[] {
    return this.calls.filter((c) => c.method === method);
  }

  reset(): void {
    this.calls.length = 0;
    this.uploads.clear();
    this.fileRequests.length = 0;
    this.fileFaults.clear();
    this.responses.length = 0;
    this.failures.clear();
    this.redirects.clear();
    this.attempts.length = 0;
    this.faults.clear();
    this.users = {};
    this.channelNames.clear();
    this.scopes = ALL_SCOPES;
    this.socketModeEnabled = true;
    this.uploadHost = undefined;
    this.streams.clear();
    this.agents = { agentApp: false, stopSubscribed: true };
    this.agentSessions.clear();
    this.tiers = undefined;
    this.tierCalls.clear();
    this.messages.clear();
    this.streaming = { enabled: true, sealAfterAppends: 0, maxChars: 12000 };
  }

  /** A stream's text as the person sees it: what its start and appends added, in order, then its stop's. */
  streamText(ts: string): string {
    return (this.streams.get(ts)?.parts ?? []).join('');
  }

  /** The person presses stop in the thread's agent session: Slack stops its open streams and names them (agent_session_stopped's `streaming_message_ts`). */
  stopAgentSession(channel: string, threadTs: string): string[] {
    const stopped: string[] = [];
    for (const [ts, stream] of this.streams) {
      if (stream.channel !== channel || stream.threadTs !== threadTs || !stream.open) continue;
      stream.open = false;
      stream.stoppedByPerson = true;
      stopped.push(ts);
    }
    return stopped;
  }

  /** An agent session's statuses in a thread, in order. */
  agentSessionOf(channel: string, threadTs: string): string[] {
    return this.agentSessions.get(`${channel}/${threadTs}`) ?? [];
  }

  close(): Promise<void> {
    for (const res of this.heldAnswers.splice(0)) res.destroy();
    return new Promise((r) => (this.server ? this.server.close(() => r()) : r()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await readBody(req);
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? '';
    const url = new URL(req.url ?? '/', this.origin);
    if (req.method === 'GET' && url.pathname.startsWith('/files-pri/')) return this.serveFile(url.pathname, token, req, res);
    if (req.method === 'POST' && url.pathname.startsWith('/upload/')) {
      const fault = await this.meetFault('upload', '', req, res);
      if (fault === 'answered') return;
      return this.receiveUpload(url.pathname.slice(8), raw, req, token, res, fault && 'cutOff' in fault ? fault : undefined);
    }
    if (req.method === 'POST' && url.pathname.startsWith('/actions/')) {
      let body: Record<string, any> = {};
      try {
        body = JSON.parse(raw.toString('utf8'));
      } catch {
        // recorded empty
      }
      this.responses.push({ path: url.pathname, body, token });
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
      return;
    }
    const method = /^\/api\/(.+)$/.exec(url.pathname)?.[1];
    if (req.method !== 'POST' || !method) {
      res.writeHead(404).end();
      return;
    }
    const body = Object.fromEntries(new URLSearchParams(raw.toString('utf8')));
    for (const key of ['blocks', 'files', 'attachments', 'loading_messages', 'prompts', 'chunks', 'metadata']) {
      if (typeof body[key] === 'string') {
        try {
          (body as any)[key] = JSON.parse(body[key]);
        } catch {
          // left as sent
        }
      }
    }
    const fault = await this.meetFault(method, String(body.channel ?? body.channel_id ?? ''), req, res, this.overTier(method, token));
    if (fault === 'answered') return;
    const call: SlackCall = { method, body, token, at: Date.now() };
    this.calls.push(call);
    await this.gates.get(method);
    const moved = this.redirects.get(method);
    if (moved) {
      res.writeHead(307, { Location: moved }).end();
      return;
    }
    call.result = this.respond(method, body, token);
    if (fault && 'madeThenHeld' in fault) {
      this.heldAnswers.push(res);
      return;
    }
    this.answer(res, call.result, fault);
  }

  /**
   * Records the attempt and applies the next injected fault for it: 'answered' when the fault was
   * the whole answer (a status, a reset); otherwise the request is served, and a `cutOff` fault
   * returned for the server to cut the answer short.
   */
  private async meetFault(
    method: string,
    channel: string,
    req: IncomingMessage,
    res: ServerResponse,
    limited?: SlackApiFault,
  ): Promise<'answered' | { cutOff: true } | { madeThenHeld: true } | undefined> {
    const fault = this.faults.get(`${method}:${channel}`)?.shift() ?? this.faults.get(method)?.shift() ?? limited;
    const attempt: SlackAttempt = { method, channel, at: Date.now(), ...(fault ? { fault } : {}) };
    this.attempts.push(attempt);
    if (!fault) return undefined;
    if ('endless' in fault) {
      attempt.closedEarly = await endlessAnswer(res, 200, '{"ok":true,"padding":"');
      return 'answered';
    }
    if ('holdMs' in fault) {
      await new Promise((r) => setTimeout(r, fault.holdMs));
      return undefined;
    }
    if ('neverAnswered' in fault) {
      this.heldAnswers.push(res);
      return 'answered';
    }
    if ('cutOff' in fault || 'madeThenHeld' in fault) return fault;
    if ('reset' in fault) {
      req.socket.resetAndDestroy();
      return 'answered';
    }
    const headers: Record<string, string> = { 'content-type': 'text/html' };
    if (fault.retryAfter) headers['retry-after'] = fault.retryAfter;
    res.writeHead(fault.status, headers).end(`<html><body>${fault.status}</body></html>`);
    return 'answered';
  }

  /** A 429 when `method` is past its tier for this token (see `tiers`); the call is counted otherwise. */
  private overTier(method: string, token: string): SlackApiFault | undefined {
    const limit = this.tiers?.[method];
    if (!limit) return undefined;
    const key = `${token}\n${method}`;
    const now = Date.now();
    const calls = (this.tierCalls.get(key) ?? []).filter((t) => t > now - 60_000);
    this.tierCalls.set(key, calls);
    if (calls.length >= limit) return { status: 429, retryAfter: String(Math.max(1, Math.ceil((calls[0] + 60_000 - now) / 1000))) };
    calls.push(now);
    return undefined;
  }

  private respond(method: string, body: Record<string, any>, token: string): Record<string, any> {
    if (method === 'apps.connections.open') return this.openConnection(token);
    if (token !== this.botToken) return { ok: false, error: 'invalid_auth' };
    const failure = this.failures.get(`${method}:${body.channel ?? body.channel_id ?? ''}`) ?? this.failures.get(method);
    if (failure === 'missing_scope') return { ok: false, error: 'missing_scope', needed: this.neededScope(method, body), provided: this.scopes ?? '' };
    if (failure) return { ok: false, error: failure };
    switch (method) {
      case 'auth.test':
        return {
          ok: true,
          url: 'https://example.slack.com/',
          team: 'Example',
          user: 'helpdesk',
          team_id: this.team,
          user_id: this.botUserId,
          bot_id: this.botId,
          is_enterprise_install: false,
        };
      case 'chat.postMessage': {
        const channel = this.conversationNamed(String(body.channel ?? ''));
        if (!channel) return { ok: false, error: 'channel_not_found' };
        if (!body.text && !body.blocks) return { ok: false, error: 'no_text' };
        const ts = this.nextTs();
        this.messages.set(ts, {
          channel,
          text: String(body.text ?? ''),
          ...(body.blocks ? { blocks: body.blocks } : {}),
          edits: 0,
          ...(body.thread_ts ? { threadTs: String(body.thread_ts) } : {}),
          ...(body.metadata && typeof body.metadata === 'object' ? { metadata: body.metadata } : {}),
        });
        return {
          ok: true,
          channel,
          ts,
          message: { type: 'message', user: this.botUserId, bot_id: this.botId, text: body.text, ts, ...(body.thread_ts ? { thread_ts: body.thread_ts } : {}) },
        };
      }
      case 'conversations.open': {
        // A direct message with one user: its id is the user's with D for U (the same each time, as on Slack).
        const users = String(body.users ?? '');
        if (!users) return { ok: false, error: 'users_list_not_supplied' };
        if (users.includes(',')) return { ok: true, channel: { id: `G${users.replace(/\W/g, '').slice(0, 10)}` } };
        if (!this.users[users]) return { ok: false, error: 'user_not_found' };
        return { ok: true, channel: { id: `D${users.slice(1)}` } };
      }
      case 'chat.postEphemeral': {
        if (!body.channel || !body.user) return { ok: false, error: 'channel_not_found' };
        return { ok: true, message_ts: this.nextTs() };
      }
      case 'users.info': {
        const user = this.users[body.user];
        if (!user) return { ok: false, error: 'user_not_found' };
        return {
          ok: true,
          user: { id: body.user, name: user.name, real_name: user.real_name, profile: { display_name: user.display_name, real_name: user.real_name } },
        };
      }
      case 'files.getUploadURLExternal': {
        const id = `F${String(++this.fileCounter).padStart(8, '0')}`;
        const host = this.uploadHost ?? this;
        host.uploads.set(id, { id, filename: String(body.filename), length: Number(body.length), data: Buffer.alloc(0), token: '' });
        return { ok: true, upload_url: `${host.origin}/upload/${id}`, file_id: id };
      }
      case 'files.completeUploadExternal': {
        // "Channel ID where the file will be shared": a name (`#general`) is refused.
        if (body.channel_id !== undefined && !CONVERSATION_ID.test(String(body.channel_id))) return { ok: false, error: 'invalid_arguments' };
        const files = (Array.isArray(body.files) ? body.files : []) as Array<{ id: string; title?: string }>;
        const uploads = (this.uploadHost ?? this).uploads;
        if (files.some((f) => !uploads.get(f.id)?.data.length)) return { ok: false, error: 'file_not_found' };
        return { ok: true, files: files.map((f) => ({ id: f.id, title: f.title, name: uploads.get(f.id)?.filename })) };
      }
      case 'assistant.threads.setStatus': {
        // Slack's own checks: the thread must be named, and the status given (empty clears it).
        if (!body.channel_id) return { ok: false, error: 'channel_not_found' };
        if (!/^\d+\.\d+$/.test(String(body.thread_ts ?? ''))) return { ok: false, error: 'invalid_thread_ts' };
        if (typeof body.status !== 'string') return { ok: false, error: 'invalid_arguments' };
        if (Array.isArray(body.loading_messages) && body.loading_messages.length > 10) return { ok: false, error: 'invalid_arguments' };
        return { ok: true };
      }
      case 'assistant.threads.setSuggestedPrompts': {
        if (!body.channel_id) return { ok: false, error: 'channel_not_found' };
        const prompts = body.prompts as unknown;
        if (!Array.isArray(prompts) || !prompts.length || prompts.length > 4) return { ok: false, error: 'invalid_arguments' };
        if (prompts.some((p: any) => typeof p?.title !== 'string' || typeof p?.message !== 'string')) return { ok: false, error: 'invalid_arguments' };
        return { ok: true };
      }
      case 'agents.sessions.setStatus': {
        // Slack's refusal to an app that is no agent is not documented: this code stands in for it.
        if (!this.agents.agentApp) return { ok: false, error: 'not_allowed' };
        if (!['processing', 'active', 'suspended', 'closed'].includes(String(body.status))) return { ok: false, error: 'invalid_arguments' };
        if (!body.thread_ts) return { ok: false, error: 'invalid_thread_ts' };
        const key = `${body.channel_id}/${body.thread_ts}`;
        this.agentSessions.set(key, [...(this.agentSessions.get(key) ?? []), String(body.status)]);
        const warning = this.agents.stopSubscribed ? undefined : 'missing_agent_session_stopped_event_subscription';
        return { ok: true, ...(warning ? { warning, response_metadata: { warnings: [warning] } } : {}) };
      }
      case 'conversations.history':
      case 'conversations.replies':
        return this.listMessages(method, body);
      case 'chat.startStream':
      case 'chat.appendStream':
      case 'chat.stopStream':
        return this.stream(method, body);
      case 'chat.update': {
        const message = this.messages.get(String(body.ts ?? ''));
        const stream = this.streams.get(String(body.ts ?? ''));
        if (!message && !stream) return { ok: false, error: 'message_not_found' };
        if (message) {
          message.text = String(body.text ?? '');
          message.edits++;
          if (body.blocks) message.blocks = body.blocks;
        }
        if (stream) {
          // An edit settles a stream left open (Slack's only way out of a sealed one).
          stream.open = false;
          stream.updated = String(body.text ?? '');
        }
        return { ok: true, channel: body.channel, ts: body.ts, text: body.text };
      }
      default:
        return { ok: false, error: 'unknown_method' };
    }
  }

  /**
   * Slack's streaming, with the limits it does not document: a stream sealed after some appends
   * (standing in for its 5 minutes), a message refused past `maxChars` in all (`msg_too_long`),
   * DM and channel streams refused without both recipient ids.
   */
  private stream(method: string, body: Record<string, any>): Record<string, any> {
    if (!this.streaming.enabled) return { ok: false, error: 'feature_not_enabled' };
    const text = typeof body.markdown_text === 'string' ? body.markdown_text : '';
    if (text.length > 12000) return { ok: false, error: 'msg_too_long' };
    if (method === 'chat.startStream') {
      const channel = this.conversationNamed(String(body.channel ?? ''));
      if (!channel) return { ok: false, error: 'channel_not_found' };
      if (!body.recipient_team_id) return { ok: false, error: 'missing_recipient_team_id' };
      if (!body.recipient_user_id) return { ok: false, error: 'missing_recipient_user_id' };
      const ts = this.nextTs();
      this.streams.set(ts, { channel, threadTs: body.thread_ts, parts: text ? [text] : [], appends: 0, open: true, start: body });
      return { ok: true, channel, ts };
    }
    const stream = this.streams.get(String(body.ts ?? ''));
    if (!stream) return { ok: false, error: 'message_not_found' };
    if (!stream.open) return { ok: false, error: 'message_not_in_streaming_state' };
    if (method === 'chat.appendStream') {
      if (!text) return { ok: false, error: 'invalid_arguments' };
      if (this.streaming.sealAfterAppends && stream.appends >= this.streaming.sealAfterAppends) {
        stream.open = false;
        stream.sealed = true;
        return { ok: false, error: 'message_not_in_streaming_state' };
      }
      if (stream.parts.join('').length + text.length > this.streaming.maxChars) return { ok: false, error: 'msg_too_long' };
      stream.appends++;
      stream.parts.push(text);
      return { ok: true, channel: stream.channel, ts: body.ts };
    }
    if (text) stream.parts.push(text);
    stream.open = false;
    stream.stop = body;
    // The session's status moves with the stop when the app says so (agent apps).
    if (body.session_status && stream.threadTs) {
      const key = `${stream.channel}/${stream.threadTs}`;
      this.agentSessions.set(key, [...(this.agentSessions.get(key) ?? []), String(body.session_status)]);
    }
    return { ok: true, channel: stream.channel, ts: body.ts, message: { ts: body.ts, text: stream.parts.join(''), streaming_state: 'completed' } };
  }

  /**
   * A message's `ts` as Slack makes them: the time it was posted (seconds) and a unique part, so
   * that `oldest` finds the messages posted since a moment.
   */
  private nextTs(): string {
    return `${Math.floor(Date.now() / 1000)}.${String(++this.tsCounter).padStart(6, '0')}`;
  }

  /** The scope `method` needs in this conversation (a missing_scope answer names it). */
  private neededScope(method: string, body: Record<string, any>): string {
    if (method === 'conversations.history' || method === 'conversations.replies')
      return HISTORY_SCOPE[String(body.channel ?? '').charAt(0)] ?? 'channels:history';
    return 'files:write';
  }

  /**
   * conversations.history (a conversation's own messages, newest first) and conversations.replies
   * (a thread's, oldest first) over what the bot posted, as Slack pages them: `oldest` (exclusive
   * unless `inclusive`), `limit`, a `cursor` to the next page; metadata only with
   * `include_all_metadata`. A token without the conversation's history scope is refused.
   */
  private listMessages(method: string, body: Record<string, any>): Record<string, any> {
    const channel = String(body.channel ?? '');
    if (!CONVERSATION_ID.test(channel)) return { ok: false, error: 'channel_not_found' };
    const needed = this.neededScope(method, body);
    if (this.scopes !== undefined && !this.scopes.split(',').includes(needed)) return { ok: false, error: 'missing_scope', needed, provided: this.scopes };
    const thread = method === 'conversations.replies' ? String(body.ts ?? '') : undefined;
    if (thread === '') return { ok: false, error: 'invalid_arguments' };
    const oldest = body.oldest === undefined ? -Infinity : Number(body.oldest);
    const inclusive = body.inclusive === 'true' || body.inclusive === '1';
    const withMetadata = body.include_all_metadata === 'true' || body.include_all_metadata === '1';
    let listed = [...this.messages.entries()].filter(([ts, m]) => {
      if (m.channel !== channel) return false;
      if (inclusive ? Number(ts) < oldest : Number(ts) <= oldest) return false;
      return thread === undefined ? !m.threadTs || m.threadTs === ts : ts === thread || m.threadTs === thread;
    });
    listed.sort(([a], [b]) => Number(a) - Number(b));
    if (thread === undefined) listed = listed.reverse();
    const limit = Math.max(1, Math.min(Number(body.limit) || 100, 1000));
    const from = body.cursor ? Number(Buffer.from(String(body.cursor), 'base64').toString('utf8').replace('offset:', '')) : 0;
    const page = listed.slice(from, from + limit);
    const more = from + limit < listed.length;
    return {
      ok: true,
      messages: page.map(([ts, m]) => ({
        type: 'message',
        user: this.botUserId,
        bot_id: this.botId,
        text: m.text,
        ts,
        ...(m.threadTs ? { thread_ts: m.threadTs } : {}),
        ...(withMetadata && m.metadata ? { metadata: m.metadata } : {}),
      })),
      has_more: more,
      response_metadata: { next_cursor: more ? Buffer.from(`offset:${from + limit}`).toString('base64') : '' },
    };
  }

  /**
   * The id of the conversation a post names: an id as it is, a user id the app's direct message
   * with that user (its id as conversations.open answers it), a channel's name (with or without
   * `#`) the id `channelNames` gives; undefined for a name Slack would not find.
   */
  private conversationNamed(given: string): string | undefined {
    if (CONVERSATION_ID.test(given)) return given;
    if (USER_ID.test(given)) return `D${given.slice(1)}`;
    return this.channelNames.get(given.replace(/^#/, ''));
  }

  /** Socket Mode's handshake: only the App-Level Token, only when the app has Socket Mode on. */
  private openConnection(token: string): Record<string, any> {
    const failure = this.failures.get('apps.connections.open');
    if (failure) return { ok: false, error: failure };
    if (token === this.botToken) return { ok: false, error: 'not_allowed_token_type' };
    if (token !== this.appToken) return { ok: false, error: 'invalid_auth' };
    if (!this.socketModeEnabled) return { ok: false, error: 'socket_mode_not_enabled' };
    if (!this.socketUrl) return { ok: false, error: 'internal_error' };
    return { ok: true, url: this.socketUrl() };
  }

  private answer(res: ServerResponse, body: Record<string, unknown>, fault?: { cutOff: true }): void {
    const headers: Record<string, string> = { 'content-type': 'application/json; charset=utf-8' };
    if (this.scopes !== undefined) headers['x-oauth-scopes'] = this.scopes;
    const text = JSON.stringify(body);
    if (fault) return cutShort(res, headers, text);
    res.writeHead(200, headers).end(text);
  }

  private async serveFile(path: string, token: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const fault = this.fileFaults.get(path)?.shift();
    this.fileRequests.push({ path, token, at: Date.now(), ...(fault ? { fault } : {}) });
    const file = this.files.get(path);
    if (!file) {
      res.writeHead(404).end();
      return;
    }
    if (fault && 'holdMs' in fault) await new Promise((r) => setTimeout(r, fault.holdMs));
    else if (fault && 'reset' in fault) return void req.socket.resetAndDestroy();
    else if (fault && 'status' in fault) {
      res
        .writeHead(fault.status, { 'content-type': 'text/html', ...(fault.retryAfter ? { 'retry-after': fault.retryAfter } : {}) })
        .end(`<html><body>${fault.status}</body></html>`);
      return;
    }
    if (file.redirect) {
      res.writeHead(302, { location: file.redirect }).end();
      return;
    }
    if (token !== this.botToken) {
      // What Slack does without a valid token: a web page, not the file.
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<html><body>Sign in to Slack</body></html>');
      return;
    }
    const headers = { 'content-type': file.type, 'content-length': String(file.data.length) };
    if (fault && 'cutOff' in fault) {
      res.writeHead(200, headers);
      res.write(file.data.subarray(0, Math.floor(file.data.length / 2)), () => setTimeout(() => res.socket?.destroy(), 20));
      return;
    }
    res.writeHead(200, headers).end(file.data);
  }

  private receiveUpload(id: string, raw: Buffer, req: IncomingMessage, token: string, res: ServerResponse, fault?: { cutOff: true }): void {
    const upload = this.uploads.get(id);
    if (!upload) {
      res.writeHead(404).end();
      return;
    }
    upload.data = multipartField(raw, req.headers['content-type'] ?? '') ?? raw;
    upload.token = token;
    upload.received = (upload.received ?? 0) + 1;
    if (fault) return cutShort(res, { 'content-type': 'text/plain' }, `OK - ${upload.data.length}`);
    res.writeHead(200, { 'content-type': 'text/plain' }).end(`OK - ${upload.data.length}`);
  }
}

/** A 200 whose body stops halfway: the headers promise the whole length, then the socket is destroyed. */
function cutShort(res: ServerResponse, headers: Record<string, string>, text: string): void {
  const bytes = Buffer.from(text);
  res.writeHead(200, { ...headers, 'content-length': String(bytes.length) });
  res.write(bytes.subarray(0, Math.floor(bytes.length / 2)), () => setTimeout(() => res.socket?.destroy(), 20));
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** The bytes of the first part of a multipart/form-data body (the upload's `body` field). */
function multipartField(raw: Buffer, contentType: string): Buffer | undefined {
  const boundary = /boundary=(?:"([^"]+)"|([^;]+))/.exec(contentType);
  if (!boundary) return undefined;
  const marker = Buffer.from(`--${boundary[1] ?? boundary[2]}`);
  const start = raw.indexOf(marker);
  if (start < 0) return undefined;
  const headerEnd = raw.indexOf(Buffer.from('\r\n\r\n'), start);
  const next = raw.indexOf(marker, headerEnd);
  if (headerEnd < 0 || next < 0) return undefined;
  return raw.subarray(headerEnd + 4, next - 2);
}
