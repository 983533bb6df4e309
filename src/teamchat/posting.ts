import type { FilesUploadV2Arguments, WebClient } from '@slack/web-api';
import type { PostMessageArguments } from './post-message';
import type { OutgoingFile } from '../files/attachments';
import { effectMetadata } from './effect-metadata';
import { findSlackEffect, notFindable } from './effect-lookup';
import { slackFailure } from './slack-api';
import { unjournaled, type Effect } from '../engine/effects';

/** The kinds of the team-chat effects in a step's journal (engine/effects.ts). */
export const SLACK_EFFECT = {
  post: 'slack.post',
  update: 'slack.update',
  ephemeral: 'slack.ephemeral',
  upload: 'slack.upload',
  streamStart: 'slack.stream.start',
  streamAppend: 'slack.stream.append',
  streamStop: 'slack.stream.stop',
} as const;

/** Where a post goes: a channel, and a thread in it when replies are threaded. */
export interface PostTarget {
  channel: string;
  threadTs?: string;
}

/** What posts a message: an Environment (`TeamChatEnvironment.postMessage`), or a caller made for one (post-message.ts). */
export interface Poster {
  postMessage(args: PostMessageArguments): Promise<{ ts?: string; channel?: string }>;
  /** The bot token's WebClient, to look a post up that may have gone out before its step was cut (none: it is posted again). */
  client?(): WebClient;
}

/** A message Slack took. */
export interface Posted {
  ts: string;
  /**
   * The conversation it is in, by id, as Slack's answer names it: a post may be given a channel's
   * name (`#general`) or a user id (the app's direct message with them), but an upload takes only
   * an id (files.completeUploadExternal) and a click names the conversation by its id.
   */
  channel: string;
}

/**
 * chat.postMessage; resolves to the posted message. Slack's refusal becomes 4001 (4008 for a
 * scope). An effect of the step (`effect`, a Task's journal): a step that runs again gets the
 * message it posted back instead of posting it again. The post carries its effect's key in its
 * metadata, so that one whose answer never came (the process died waiting) is found in the
 * conversation before it is posted again (effect-lookup.ts).
 */
export async function postText(env: Poster, target: PostTarget, text: string, blocks?: unknown[], effect: Effect = unjournaled): Promise<Posted> {
  // Blocks were checked for shape (a type on each); Slack itself judges the rest (invalid_blocks -> 4001).
  const args = {
    channel: target.channel,
    text,
    ...(target.threadTs ? { thread_ts: target.threadTs } : {}),
    ...(blocks ? { blocks } : {}),
  };
  // As it is now: a Session's first post moves its conversation into the thread it opens.
  const where = { ...target };
  const client = env.client?.bind(env);
  const lookup = client && ((key: string, since: number) => findSlackEffect(client(), where, key, since));
  return effect<Posted>(
    SLACK_EFFECT.post,
    async (key) => {
      try {
        const res = await env.postMessage(key ? { ...args, metadata: effectMetadata(key) } : args);
        return { ts: String(res.ts ?? ''), channel: res.channel || target.channel };
      } catch (err) {
        throw slackFailure(err, 'chat.postMessage');
      }
    },
    lookup ? { lookup } : {},
  );
}

/** Shares files below the message, in the same thread, with Slack's upload flow (filesUploadV2): one effect of the step for them all. */
export async function uploadFiles(client: WebClient, target: PostTarget, files: OutgoingFile[], effect: Effect = unjournaled): Promise<void> {
  if (!files.length) return;
  await effect(
    SLACK_EFFECT.upload,
    async () => {
      await upload(client, target, files);
      return { files: files.length };
    },
    { lookup: notFindable('an upload') },
  );
}

async function upload(client: WebClient, target: PostTarget, files: OutgoingFile[]): Promise<void> {
  // Buffers, never paths: filesUploadV2 reads a string `file` from the local disk.
  const uploads = await Promise.all(files.map(async (f) => ({ file: await f.read(), filename: f.name, title: f.name })));
  const args = {
    channel_id: target.channel,
    ...(target.threadTs ? { thread_ts: target.threadTs } : {}),
    file_uploads: uploads,
  } as FilesUploadV2Arguments;
  try {
    await client.filesUploadV2(args);
  } catch (err) {
    throw slackFailure(err, 'files upload');
  }
}
