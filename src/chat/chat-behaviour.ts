import type { ChannelBehaviour } from '../engine/behaviour';
import { resolveAttachments } from '../engine/files/attachments';
import { resolvePlaceholders } from '../engine/placeholders';

/**
 * The Chat Channel of the editor's test chat: what a Task says becomes a transcript line (the
 * Session history, which the editor is fed over comms); nothing leaves the machine.
 */
export const chatBehaviour: ChannelBehaviour = {
  channel: 'Chat',
  async output(task, text, attachments) {
    const files = await resolveAttachments(attachments, task.msg.vars, task.engine.files);
    return { text: resolvePlaceholders(text, task.msg.vars), files: files.map((f) => f.name) };
  },
  async prompt(task, prompt) {
    return { text: resolvePlaceholders(prompt, task.msg.vars) };
  },
  async end() {},
};
