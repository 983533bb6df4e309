import type { ChannelBehaviour, TaskContext } from '../engine/behaviour';
import type { ChannelName } from '../model/channels';
import { TaskError } from '../model/errors';
import { resolveAttachments } from '../files/attachments';
import { resolvePlaceholders } from '../model/placeholders';
import { bindingOf } from './addresses';
import type { MessagingModule } from './messaging-module';
import { messengerMessages, send, smsMessages, textMessages, type SendContext } from './outbound';
import { findTwilioMessage } from './effect-lookup';
import { accountCredentials, providerClient, type MessageToCreate } from './provider-client';

/** The Session's Environment and number pair, or the reason a reply cannot go out. */
export function sendContext(messaging: MessagingModule, task: TaskContext, httpNodeRoot: string | undefined): SendContext {
  const env = messaging.environments.get(task.session.environment);
  if (!env) throw new TaskError(4008, `The messaging Environment ${task.session.environment} of this Session is not deployed`);
  const pair = bindingOf(task.session.binding);
  if (!pair) throw new TaskError(4012, 'This Session is not bound to a pair of numbers');
  accountCredentials(env);
  return {
    log: task.log,
    remembered: task.remembered,
    effect: task.effect,
    env,
    session: task.session,
    pair,
    links: messaging.links,
    httpNodeRoot,
    nodeId: task.node.id,
    lookup: (message) => async (_key, since) => {
      // The list gives a template's text as it was filled in, which this side never sees: it cannot be matched.
      if (message.contentSid) throw new Error('a template message cannot be told apart in the Messages list');
      const found = await findTwilioMessage(providerClient(env), listed(message), since);
      return found && { sid: found.sid };
    },
  };
}

/** What of a message the Messages list shows: the media's URLs are links made anew each time a step runs, so only their count. */
function listed(message: MessageToCreate) {
  return { from: message.from, to: message.to, body: message.body, mediaCount: message.mediaUrl?.length ?? 0 };
}

/**
 * The standard Tasks on `TelcoMessagingSms` and `TelcoMessagingMessenger`: replies go
 * out through the provider's REST API from the number the user wrote to. Texts are plain, so
 * placeholder values need no escaping.
 */
export function messagingBehaviour(channel: ChannelName, messaging: MessagingModule, httpNodeRoot: () => string | undefined): ChannelBehaviour {
  const messenger = channel === 'TelcoMessagingMessenger';
  return {
    channel,
    async output(task, template, attachments) {
      const text = resolvePlaceholders(template, task.msg.vars);
      const files = await resolveAttachments(attachments, task.msg.vars, task.files);
      if (!text.trim() && !files.length) throw new TaskError(3005, 'The OutputTask has neither text nor files to send');
      const ctx = sendContext(messaging, task, httpNodeRoot());
      const outgoing = messenger ? await messengerMessages(ctx, text, files) : await smsMessages(ctx, text, files);
      await send(ctx, outgoing.messages);
      // The history keeps the text and the names of the files that went, not the links (they expire).
      return { text, files: outgoing.files };
    },
    async prompt(task, template) {
      const text = resolvePlaceholders(template, task.msg.vars);
      // An empty prompt just waits for the next message.
      if (!text.trim()) return { text: '' };
      const ctx = sendContext(messaging, task, httpNodeRoot());
      await send(ctx, textMessages(text));
      return { text };
    },
    async end() {
      // A conversation by message has nothing to close on the provider: nothing is sent.
    },
  };
}
