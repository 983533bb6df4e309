import type { TaskContext } from '../engine/behaviour';
import type { EffectLookup } from '../engine/effects';
import { TaskError } from '../model/errors';
import type { OutgoingFile } from '../files/attachments';
import { publicRouteUrl } from '../http/public-url';
import { LINK_TTL, MESSAGE_BODY_MAX_CHARS, MESSENGER_MEDIA } from '../model/limits';
import type { SessionRecord } from '../model/session';
import type { PairBinding } from './addresses';
import { displayName, MEDIA_PATH, type MessagingEnvironment } from './environment';
import type { MediaLinks } from './media-links';
import { createMessage, providerError, type MessageToCreate } from './provider-client';
import { rememberSent, requireMessengerWindow, statusCallbackUrl } from './reach';

/** One provider message: a text, one media file (messenger), both (a captioned image), or a template. */
export interface OutboundMessage {
  body?: string;
  mediaUrl?: string[];
  contentSid?: string;
  contentVariables?: string;
}

export interface SendContext {
  /** A line in the Session log. */
  log: TaskContext['log'];
  remembered: TaskContext['remembered'];
  /** Each message is an effect of the step (engine/effects.ts): recorded once the provider took it, not sent again by a re-run. */
  effect: TaskContext['effect'];
  /** How a message that may have gone out before the step was cut is looked up at the provider (none: it is sent again). */
  lookup?: (message: MessageToCreate) => EffectLookup<SentMessage>;
  env: MessagingEnvironment;
  session: SessionRecord;
  pair: PairBinding;
  links: MediaLinks;
  httpNodeRoot: string | undefined;
  nodeId: string;
}

/** What the step keeps of a message the provider took (its journaled outcome): its SID, when the provider gave one. */
export interface SentMessage {
  sid?: string;
}

/** The effect's kind in the journal. */
export const MESSAGE_EFFECT = 'twilio.message';

/** What an OutputTask sends: the provider's messages, and the names of the files they carry (what the history lists). */
export interface Outgoing {
  messages: OutboundMessage[];
  files: string[];
}

/** Messenger sends real media for these types and sizes; the rest goes as a link. */
export function sendsAsMedia(file: { type: string; size: number }): boolean {
  const type = bareType(file.type);
  if ((MESSENGER_MEDIA.imageTypes as readonly string[]).includes(type)) return file.size <= MESSENGER_MEDIA.imageMaxBytes;
  if ((MESSENGER_MEDIA.otherTypes as readonly string[]).includes(type)) return file.size <= MESSENGER_MEDIA.otherMaxBytes;
  return false;
}

/** An image or video the messenger shows with the text as its caption. */
function takesCaption(file: OutgoingFile): boolean {
  const type = bareType(file.type);
  return sendsAsMedia(file) && (type.startsWith('image/') || type.startsWith('video/'));
}

/**
 * Messenger: one file per message. A first image or video carries the text as its caption;
 * otherwise the text goes first on its own and each file follows. Without a public base URL the
 * provider cannot fetch anything: 4008 before anything is sent.
 */
export async function messengerMessages(ctx: SendContext, text: string, files: OutgoingFile[]): Promise<Outgoing> {
  if (!files.length) return { messages: text ? textMessages(text) : [], files: [] };
  if (!ctx.env.config.publicBaseUrl) {
    throw new TaskError(4008, `Messenger media need the public base URL of the messaging Environment "${displayName(ctx.env)}"; nothing was sent`);
  }
  const messages: OutboundMessage[] = [];
  for (const [index, file] of files.entries()) {
    const url = await link(ctx, file, LINK_TTL.messenger);
    // A caption is one Body: a longer text goes before the file, in as many messages as it needs.
    const caption = index === 0 && takesCaption(file) && text.length <= MESSAGE_BODY_MAX_CHARS ? text : '';
    if (index === 0 && !caption && text) messages.push(...textMessages(text));
    messages.push(sendsAsMedia(file) ? { ...(caption ? { body: caption } : {}), mediaUrl: [url] } : { body: `${file.name}: ${url}` });
  }
  return { messages, files: files.map((f) => f.name) };
}

/**
 * SMS: the text then a `<name>: <link>` line per file, in as few messages as the provider's Body
 * limit allows (a link line is about 150-190 characters, so nine files outgrow one message, and
 * Twilio refuses the whole message, 21617): in order, the text first, no line split between two
 * messages (only a text longer than a message is cut). Without a public base URL no link can be
 * made: the text goes alone and the files are left out with a 4022 warning (the history does not
 * list them); with no text either, nothing could go, and the Task fails with that 4022 so that its
 * error branch hears of it rather than its done output.
 */
export async function smsMessages(ctx: SendContext, text: string, files: OutgoingFile[]): Promise<Outgoing> {
  if (files.length && !ctx.env.config.publicBaseUrl) {
    const message = `${files.map((f) => f.name).join(', ')} left out: links need the public base URL of the messaging Environment "${displayName(ctx.env)}"`;
    if (!text.trim()) throw new TaskError(4022, `${message}; nothing was sent`);
    ctx.log({ level: 'warn', code: 4022, message, nodeId: ctx.nodeId });
    return { messages: textMessages(text), files: [] };
  }
  const lines = text ? [text] : [];
  for (const file of files) lines.push(`${file.name}: ${await link(ctx, file, LINK_TTL.sms)}`);
  return { messages: bodies(lines), files: files.map((f) => f.name) };
}

function bodies(lines: string[]): OutboundMessage[] {
  return packLines(lines, MESSAGE_BODY_MAX_CHARS).map((body) => ({ body }));
}

/**
 * A text alone (an InputTask's prompt, a messenger text), in as many messages as the provider's
 * Body limit needs: one longer than it is refused whole (21617), so the person would get nothing.
 */
export function textMessages(text: string): OutboundMessage[] {
  return bodies([text]);
}

/**
 * Lines joined by newlines into as few bodies of at most `limit` characters as hold them, in order.
 * A line longer than the limit (a long text) is cut, at its last white space within the limit when
 * it has one, and its pieces packed as lines.
 */
export function packLines(lines: string[], limit: number): string[] {
  const bodies: string[] = [];
  for (const line of lines.flatMap((l) => cutToFit(l, limit))) {
    const last = bodies.length - 1;
    if (last >= 0 && bodies[last].length + 1 + line.length <= limit) bodies[last] += '\n' + line;
    else bodies.push(line);
  }
  return bodies;
}

/** A line in pieces of at most `limit` characters, cut at white space where it can be (never inside a character). */
function cutToFit(line: string, limit: number): string[] {
  const pieces: string[] = [];
  let rest = line;
  while (rest.length > limit) {
    const space = lastSpaceWithin(rest, limit);
    let at = space > 0 ? space : limit;
    // A character outside the Basic Multilingual Plane (an emoji) is two code units: not cut in half.
    if (space <= 0 && isHighSurrogate(rest.charCodeAt(at - 1))) at -= 1;
    pieces.push(rest.slice(0, at));
    rest = space > 0 ? rest.slice(at + 1) : rest.slice(at);
  }
  pieces.push(rest);
  return pieces;
}

/** Index of the last white space at or before `limit` (so the piece before it fits), or -1. */
function lastSpaceWithin(text: string, limit: number): number {
  for (let i = Math.min(limit, text.length - 1); i > 0; i--) if (/\s/.test(text[i])) return i;
  return -1;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

/**
 * Sends in order, from the number the user wrote to; a refusal stops the rest with 4001. Each
 * message asks for its delivery statuses, and the Session keeps its id so a status finds it. A
 * free-form message outside the messenger's 24-hour window stops with 3005 before any is sent.
 */
export async function send(ctx: SendContext, messages: OutboundMessage[]): Promise<void> {
  if (!messages.length) return;
  if (messages.some((m) => !m.contentSid)) await requireMessengerWindow(ctx.remembered, ctx.session, ctx.pair);
  const statusCallback = statusCallbackUrl(ctx.env, ctx.httpNodeRoot);
  for (const message of messages) {
    const create: MessageToCreate = { from: ctx.pair.ours, to: ctx.pair.user, ...message, ...(statusCallback ? { statusCallback } : {}) };
    const sent = await ctx.effect<SentMessage>(
      MESSAGE_EFFECT,
      async () => {
        try {
          const sid = await createMessage(ctx.env, create);
          return sid ? { sid } : {};
        } catch (err) {
          throw providerError(err, `the message to ${ctx.pair.user}`);
        }
      },
      { lookup: ctx.lookup?.(create) },
    );
    rememberSent(ctx.session, sent.sid);
  }
}

async function link(ctx: SendContext, file: OutgoingFile, ttl: number): Promise<string> {
  const token = await ctx.links.create(file, ttl);
  return publicRouteUrl(ctx.env.config.publicBaseUrl, ctx.httpNodeRoot, MEDIA_PATH + token) as string;
}

function bareType(type: string): string {
  return type.split(';')[0].trim().toLowerCase();
}
