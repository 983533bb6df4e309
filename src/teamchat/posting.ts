import type { WebClient } from '@slack/web-api';
import type { OutgoingFile } from '../engine/files/attachments';
import { slackFailure } from './slack-api';

/** Where a post goes: a channel, and a thread in it when replies are threaded. */
export interface PostTarget {
  channel: string;
  threadTs?: string;
}

/** chat.postMessage; resolves to the posted message's ts. Slack's refusal becomes 4001 (4008 for a scope). */
export async function postText(client: WebClient, target: PostTarget, text: string, blocks?: unknown[]): Promise<string> {
  try {
    const res = await client.chat.postMessage({
      channel: target.channel,
      text,
      ...(target.threadTs ? { thread_ts: target.threadTs } : {}),
      ...(blocks ? { blocks: blocks as any } : {}),
    });
    return String(res.ts ?? '');
  } catch (err) {
    throw slackFailure(err, 'chat.postMessage');
  }
}

/** Shares files below the message, in the same thread, with Slack's upload flow (filesUploadV2). */
export async function uploadFiles(client: WebClient, target: PostTarget, files: OutgoingFile[]): Promise<void> {
  if (!files.length) return;
  const uploads = await Promise.all(files.map(async (f) => ({ file: await f.read(), filename: f.name, title: f.name })));
  try {
    await client.filesUploadV2({
      channel_id: target.channel,
      ...(target.threadTs ? { thread_ts: target.threadTs } : {}),
      file_uploads: uploads,
    } as any);
  } catch (err) {
    throw slackFailure(err, 'files upload');
  }
}
