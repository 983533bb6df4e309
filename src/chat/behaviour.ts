import type { ChannelBehaviour } from '../engine/behaviour';
import { resolveAttachments } from '../files/attachments';
import { resolvePlaceholders } from '../model/placeholders';
import type { ChatDownloads } from './chat-downloads';

/** A file the Process sent in the test chat: the transcript links it by `id` (none when it was too big to keep). */
export interface ChatDownload {
  name: string;
  id?: string;
}

/**
 * The Chat Channel of the editor's test chat: what a Task says becomes a transcript line (the
 * Session history, which the editor is fed over comms); nothing leaves the machine. The files an
 * OutputTask sends are kept for download from the transcript.
 */
export function chatBehaviour(downloads: ChatDownloads): ChannelBehaviour {
  return {
    channel: 'Chat',
    async output(task, text, attachments) {
      const files = await resolveAttachments(attachments, task.msg.vars, task.files);
      const kept: ChatDownload[] = [];
      for (const file of files) {
        const id = downloads.keep({ name: file.name, type: file.type, data: await file.read() });
        kept.push(id ? { name: file.name, id } : { name: file.name });
      }
      return {
        text: resolvePlaceholders(text, task.msg.vars),
        files: files.map((f) => f.name),
        ...(kept.length ? { detail: { downloads: kept } } : {}),
      };
    },
    async prompt(task, prompt) {
      return { text: resolvePlaceholders(prompt, task.msg.vars) };
    },
    async end() {},
  };
}
