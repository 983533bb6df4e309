import type { WebClient } from '@slack/web-api';
import { slackErrorCode } from '../slack-api';
import type { Pacer } from './pacer';
import { unjournaled, type Effect, type EffectLookup } from '../../engine/effects';
import { notFindable } from '../effect-lookup';
import { SLACK_EFFECT } from '../posting';

/**
 * What one streamed Slack message may hold. Slack documents 12,000 characters per call, and
 * refuses a streamed message past about 12,000 in all (`msg_too_long`), measured lower (about
 * 10,600 UTF-8 bytes) once there is body text: an answer rolls over to a new message before.
 */
export const MESSAGE_BUDGET_BYTES = 9000;

/** The fallback edits a posted message at most this often (chat.update is Tier 3). */
export const EDIT_INTERVAL_MS = 2000;

/** Slack's answers that mean the workspace has no streaming (GovSlack, older plans): post and edit instead. */
const NO_STREAMING = new Set(['feature_not_enabled', 'unknown_method', 'method_deprecated']);
/** The stream cannot take more (sealed about 5 minutes after it started, or full): go on in a new message. */
const ROLL_OVER = new Set(['message_not_in_streaming_state', 'msg_too_long']);
/** The person stopped the answer in Slack. */
const STOPPED = new Set(['stopped_by_user', 'agent_session_stopped']);

export interface AnswerTarget {
  channel: string;
  threadTs?: string;
  recipientUserId?: string;
  recipientTeamId?: string;
}

/** One Slack message of the answer and the text it holds. */
export interface AnswerMessage {
  channel: string;
  ts: string;
  text: string;
  bytes: number;
}

export interface AnswerCalls {
  client: () => WebClient;
  postMessage: (args: { channel: string; text: string; thread_ts?: string }) => Promise<{ ts?: string; channel?: string }>;
  pacer: Pacer;
  /** No streaming in this workspace: known once, for every later answer. */
  noStreaming: { latched: boolean };
  /** A message was posted in this conversation (Slack clears the thread's status then). */
  posted: (channel: string, threadTs?: string) => void;
  /** The thread's agent session, for an app declared as an agent: `processing` (Slack's stop button) while the answer comes, `active` after. */
  agentSession?: { set: (status: 'processing' | 'active') => Promise<void>; isAgent: () => boolean };
  budgetBytes?: number;
  editIntervalMs?: number;
  /**
   * Each call is an effect of the Session's step (engine/effects.ts): a step that runs again gets
   * the stream it started (its ts) and the parts it appended back, instead of making them again.
   */
  effect?: Effect;
}

/**
 * One answer in Slack: streamed (`chat.startStream`, `appendStream`, `stopStream`) in as many
 * messages as it takes, or posted and edited where streaming is not available. Calls are made one
 * at a time by its caller (the Stream reply's chain per Session); text is never lost or sent twice:
 * a piece Slack refused is sent again, whole, in the next message.
 */
export class SlackAnswer {
  readonly messages: AnswerMessage[] = [];
  fallback: boolean;
  stopped = false;
  /** The fallback's edit not made yet (within the 2 s), and when the last one was. */
  private editDue = false;
  private lastEdit = 0;
  private streaming = false;
  private begun = false;
  /** The last part has come: an append still waiting for its turn keeps its text (`held`) for the stop instead. */
  private hurried = false;
  private held = '';
  private hurry: () => void = () => undefined;
  private readonly hurrySignal = new Promise<void>((resolve) => (this.hurry = resolve));
  /**
   * The step runs again after a cut (a crash, a deploy) and its earlier run had begun the answer in
   * Slack: its messages (`stranded`, from the journal) are settled with the whole answer at the
   * finish, and nothing is streamed a second time.
   */
  private recovering = false;
  private readonly stranded: Array<AnswerMessage & { stream: boolean }> = [];
  private readonly createdAt = Date.now();
  /** The fallback's message being edited. */
  private posted: AnswerMessage | undefined;

  constructor(
    private readonly calls: AnswerCalls,
    private readonly target: AnswerTarget,
  ) {
    this.fallback = calls.noStreaming.latched;
  }

  get text(): string {
    return this.messages.map((m) => m.text).join('');
  }

  /** Adds text to the answer in Slack (split across messages as needed). */
  async add(text: string): Promise<void> {
    if (!text || this.stopped || this.recovering) return;
    if (!this.begun) {
      this.begun = true;
      await this.calls.agentSession?.set('processing');
      if (this.stopped) return;
    }
    if (this.fallback) return this.addByEdit(text);
    let rest = text;
    while (rest && !this.stopped && !this.fallback && !this.recovering) {
      const current = this.streaming ? this.messages[this.messages.length - 1] : undefined;
      const room = this.budget - (current?.bytes ?? 0);
      if (current && room < Math.min(this.budget / 10, Buffer.byteLength(rest))) {
        // Full enough: this message ends here, the rest goes on in a new one.
        await this.stopCurrent();
        continue;
      }
      const piece = cut(rest, current ? room : this.budget);
      rest = rest.slice(piece.length);
      if (current) await this.append(current, piece);
      else await this.start(piece);
    }
    if (rest && this.fallback && !this.stopped && !this.recovering) await this.addByEdit(rest);
  }

  /**
   * Ends the answer: the stream stopped (with `blocks` under it), or the fallback's last edit with
   * the whole text. `rest`, the answer's last text not sent yet, goes with the stop when it fits
   * the message: `chat.stopStream` has a budget of its own (Tier 2), so the end of an answer does
   * not wait behind the appends of every other answer of the app.
   */
  async finish(blocks?: unknown[], rest = '', whole = ''): Promise<void> {
    if (this.recovering) return this.settleStranded(whole, blocks);
    rest = this.held + rest;
    this.held = '';
    this.hurried = false;
    if (rest && !this.stopped) {
      const open = this.streaming && !this.fallback ? this.messages[this.messages.length - 1] : undefined;
      if (!open || Buffer.byteLength(rest) > this.budget - open.bytes) {
        await this.add(rest);
        rest = '';
      }
    }
    if (this.fallback) {
      if (!this.posted) return;
      await this.editWhenDue(this.posted, blocks);
      await this.calls.agentSession?.set('active');
      return;
    }
    const current = this.streaming ? this.messages[this.messages.length - 1] : undefined;
    // Stopped by the person: Slack ended the stream itself, and it is left as they stopped it.
    if (!current || this.stopped) return;
    this.streaming = false;
    try {
      await this.api(SLACK_EFFECT.streamStop, 'chat.stopStream', {
        channel: current.channel,
        ts: current.ts,
        ...(rest ? { markdown_text: rest } : {}),
        ...(blocks?.length ? { blocks } : {}),
        ...this.sessionIdle(),
      });
    } catch (err) {
      const reason = errorOf(err);
      if (STOPPED.has(reason) || this.stopped) return void (this.stopped = true);
      if (!ROLL_OVER.has(reason)) throw err;
      if (rest) {
        // The rest did not land: this message is settled with what it holds, and the rest ends the answer in the next.
        await this.settle(current, reason);
        await this.add(rest);
        return this.finish(blocks);
      }
      // Sealed before its end: the only way to settle the message is an edit with what it holds.
      await this.update(current, blocks);
      await this.calls.agentSession?.set('active');
      return;
    }
    current.text += rest;
    current.bytes += Buffer.byteLength(rest);
  }

  /** The answer's last part has come: what still waits for an append's turn ends the answer with its stop (see finish). */
  finishing(): void {
    this.hurried = true;
    this.hurry();
  }

  /** The answer failed part-way: its open stream is stopped with what it holds, so the person does not see it spin until Slack seals it. */
  async abandon(): Promise<void> {
    const current = this.streaming ? this.messages[this.messages.length - 1] : undefined;
    this.streaming = false;
    if (!current) return;
    try {
      await this.api(SLACK_EFFECT.streamStop, 'chat.stopStream', { channel: current.channel, ts: current.ts, ...this.sessionIdle() });
    } catch {
      // Best effort: the failure the flow hears about is the first one.
    }
  }

  /** The person stopped the answer in Slack (`agent_session_stopped`): Slack stopped its stream, and nothing more is sent. */
  stoppedByPerson(): void {
    this.stopped = true;
    this.streaming = false;
  }

  /** Whether the answer is in this thread, or streams one of these messages. */
  isIn(channel: string, threadTs: string, streams: string[]): boolean {
    if (this.messages.some((m) => m.channel === channel && streams.includes(m.ts))) return true;
    return this.target.channel === channel && this.target.threadTs === threadTs;
  }

  /** An agent's session waits for the person again once the stream stops. */
  private sessionIdle(): { session_status?: 'active' } {
    return this.calls.agentSession?.isAgent() ? { session_status: 'active' } : {};
  }

  /** A Slack call as an effect of the step: made once, its outcome recorded (a re-run gets it back). */
  private call<T>(kind: string, make: () => Promise<T>, lookup?: EffectLookup<T>): Promise<T> {
    return (this.calls.effect ?? unjournaled)(kind, make, lookup ? { lookup } : undefined);
  }

  private async api(kind: string, method: string, args: Record<string, unknown>): Promise<void> {
    await this.call(kind, async () => {
      await this.calls.client().apiCall(method, args);
      return {};
    });
  }

  private get budget(): number {
    return this.calls.budgetBytes ?? MESSAGE_BUDGET_BYTES;
  }

  private get editInterval(): number {
    return this.calls.editIntervalMs ?? EDIT_INTERVAL_MS;
  }

  private async start(piece: string): Promise<void> {
    const { channel, threadTs, recipientUserId, recipientTeamId } = this.target;
    let res: { channel?: string; ts?: string; at?: number };
    try {
      // The outcome a re-run gets back is the stream's ts and channel.
      res = await this.call(
        SLACK_EFFECT.streamStart,
        async () => {
          const started = (await this.calls.client().apiCall('chat.startStream', {
            channel,
            ...(threadTs ? { thread_ts: threadTs } : {}),
            // Slack wants both in a channel and in a DM (missing_recipient_team_id / _user_id otherwise).
            ...(recipientUserId ? { recipient_user_id: recipientUserId } : {}),
            ...(recipientTeamId ? { recipient_team_id: recipientTeamId } : {}),
            markdown_text: piece,
          })) as unknown as { channel?: string; ts?: string };
          return { ...(started.channel ? { channel: started.channel } : {}), ...(started.ts ? { ts: started.ts } : {}), at: Date.now() };
        },
        notFindable("a stream's start"),
      );
    } catch (err) {
      if (!NO_STREAMING.has(errorOf(err))) throw err;
      // Latched: this workspace will not stream later either.
      this.calls.noStreaming.latched = true;
      this.fallback = true;
      await this.addByEdit(piece);
      return;
    }
    this.calls.posted(channel, threadTs);
    if (this.replayed(res)) return this.strand({ channel: res.channel ?? channel, ts: res.ts ?? '', stream: true });
    this.messages.push({ channel: res.channel ?? channel, ts: res.ts ?? '', text: piece, bytes: Buffer.byteLength(piece) });
    this.streaming = true;
  }

  private async append(current: AnswerMessage, piece: string): Promise<void> {
    if (!this.hurried) await Promise.race([this.calls.pacer.turn(), this.hurrySignal]);
    if (this.hurried) {
      this.held += piece;
      return;
    }
    try {
      // A 429 is waited out and sent again by the client's fetch (slack-fetch.ts): the stream is kept.
      // Recorded as the length it delivered: a re-run that reaches it again knows the piece is in the message.
      await this.call(SLACK_EFFECT.streamAppend, async () => {
        await this.calls.client().apiCall('chat.appendStream', { channel: current.channel, ts: current.ts, markdown_text: piece });
        return { bytes: Buffer.byteLength(piece) };
      });
    } catch (err) {
      const reason = errorOf(err);
      // The person's stop (its event may come just before Slack's refusal): no new message.
      if (STOPPED.has(reason) || this.stopped) return this.stoppedByPerson();
      if (!ROLL_OVER.has(reason)) throw err;
      // The piece did not land: the message is settled with what it holds, the piece opens the next one.
      this.streaming = false;
      await this.settle(current, reason);
      if (!this.stopped) await this.start(piece);
      return;
    }
    current.text += piece;
    current.bytes += Buffer.byteLength(piece);
  }

  private async stopCurrent(): Promise<void> {
    const current = this.messages[this.messages.length - 1];
    this.streaming = false;
    try {
      await this.api(SLACK_EFFECT.streamStop, 'chat.stopStream', { channel: current.channel, ts: current.ts });
    } catch (err) {
      const reason = errorOf(err);
      if (STOPPED.has(reason) || this.stopped) return this.stoppedByPerson();
      if (!ROLL_OVER.has(reason)) throw err;
      await this.settle(current, reason);
    }
  }

  /** A stream Slack will take no more in: a sealed one is left a broken pill until edited with its text; a full one is stopped. */
  private async settle(message: AnswerMessage, reason: string): Promise<void> {
    try {
      if (reason === 'msg_too_long') await this.api(SLACK_EFFECT.streamStop, 'chat.stopStream', { channel: message.channel, ts: message.ts });
      else await this.api(SLACK_EFFECT.update, 'chat.update', { channel: message.channel, ts: message.ts, text: message.text });
    } catch {
      // Best effort: the answer goes on in the next message whatever became of this one.
    }
  }

  /**
   * The fallback: the first text posted, the rest edited in at most every 2 s (the last edit at the
   * finish). A message takes what a streamed one would; the rest goes on in a new message, posted
   * once the full one has had its last edit with all it holds, so nothing is lost or repeated.
   */
  private async addByEdit(text: string): Promise<void> {
    let rest = text;
    while (rest) {
      const last = this.posted;
      const room = last ? this.budget - last.bytes : 0;
      if (!last || room < Math.min(this.budget / 10, Buffer.byteLength(rest))) {
        if (last && this.editDue) await this.editWhenDue(last);
        const piece = cut(rest, this.budget);
        rest = rest.slice(piece.length);
        await this.post(piece);
        continue;
      }
      const piece = cut(rest, room);
      rest = rest.slice(piece.length);
      last.text += piece;
      last.bytes += Buffer.byteLength(piece);
      this.editDue = true;
    }
    if (this.editDue && this.posted && Date.now() - this.lastEdit >= this.editInterval) await this.update(this.posted);
  }

  /** A message of the fallback's, posted with its first text. */
  private async post(text: string): Promise<void> {
    const { channel, threadTs } = this.target;
    const res = await this.call(
      SLACK_EFFECT.post,
      async () => {
        const posted = await this.calls.postMessage({ channel, text, ...(threadTs ? { thread_ts: threadTs } : {}) });
        return { ...(posted.channel ? { channel: posted.channel } : {}), ...(posted.ts ? { ts: posted.ts } : {}), at: Date.now() };
      },
      notFindable("an answer's post"),
    );
    if (!this.recovering && this.replayed(res)) return this.strand({ channel: res.channel ?? channel, ts: res.ts ?? '', stream: false });
    this.posted = { channel: res.channel ?? channel, ts: res.ts ?? '', text, bytes: Buffer.byteLength(text) };
    this.messages.push(this.posted);
    this.lastEdit = Date.now();
  }

  /** Whether a call's outcome is the journal's, made by an earlier run of the step (before this answer began). */
  private replayed(res: { at?: number }): boolean {
    return typeof res.at === 'number' && res.at < this.createdAt;
  }

  /** The earlier run of the step had begun the answer in this message: it is settled at the finish (settleStranded). */
  private strand(message: { channel: string; ts: string; stream: boolean }): void {
    this.recovering = true;
    this.streaming = false;
    this.posted = undefined;
    const stranded = { ...message, text: '', bytes: 0 };
    this.stranded.push(stranded);
    this.messages.push(stranded);
  }

  /**
   * The re-run's whole answer in the messages its earlier run left: each stream that may still be
   * open is stopped (a stream never stopped stays a broken pill), then edited with its share of the
   * answer (`chat.update`), the last with the feedback buttons; what does not fit goes on in new
   * posts. Nothing is streamed twice, and the person reads the answer once, whole.
   */
  private async settleStranded(whole: string, blocks?: unknown[]): Promise<void> {
    const shares: string[] = [];
    for (let rest = whole; rest;) {
      const share = cut(rest, this.budget);
      shares.push(share);
      rest = rest.slice(share.length);
    }
    for (const message of this.stranded) {
      if (!message.stream) continue;
      try {
        await this.api(SLACK_EFFECT.streamStop, 'chat.stopStream', { channel: message.channel, ts: message.ts });
      } catch {
        // Sealed already (about 5 minutes after it started): the edit below settles it.
      }
    }
    for (let i = 0; i < shares.length; i++) {
      let message: AnswerMessage | undefined = this.stranded[i];
      if (!message) {
        await this.post(shares[i]);
        message = this.posted;
      }
      if (!message) continue;
      message.text = shares[i];
      message.bytes = Buffer.byteLength(shares[i]);
      await this.update(message, i === shares.length - 1 ? blocks : undefined);
    }
    await this.calls.agentSession?.set('active');
  }

  /** The edit, once 2 s have passed since the last one. */
  private async editWhenDue(message: AnswerMessage, blocks?: unknown[]): Promise<void> {
    const wait = this.lastEdit + this.editInterval - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    await this.update(message, blocks);
  }

  private async update(message: AnswerMessage, blocks?: unknown[]): Promise<void> {
    this.editDue = false;
    this.lastEdit = Date.now();
    await this.api(SLACK_EFFECT.update, 'chat.update', {
      channel: message.channel,
      ts: message.ts,
      text: message.text,
      ...(blocks?.length ? { blocks: [{ type: 'markdown', text: message.text }, ...blocks] } : {}),
    });
  }

  /** Whether an edit is still owed (the finish makes it). */
  get pendingEdit(): boolean {
    return this.editDue;
  }
}

const errorOf = slackErrorCode;

/** The start of `text` that fits in `bytes` UTF-8 bytes, cut after a line or a space when one is near the end. */
export function cut(text: string, bytes: number): string {
  if (Buffer.byteLength(text) <= bytes) return text;
  let end = 0;
  let used = 0;
  for (const ch of text) {
    const size = Buffer.byteLength(ch);
    if (used + size > bytes) break;
    used += size;
    end += ch.length;
  }
  const head = text.slice(0, Math.max(end, 1));
  const br = Math.max(head.lastIndexOf('\n'), head.lastIndexOf(' '));
  return br > head.length * 0.8 ? head.slice(0, br + 1) : head;
}
