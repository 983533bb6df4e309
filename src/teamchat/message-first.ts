import { randomBytes } from 'node:crypto';
import { testVars } from '../model/test-vars';
import type { StartKind } from '../engine/starts';
import { fileList } from '../files/file-values';
import type { OutTarget } from '../kit/out-node';
import { readField } from '../kit/typed-field';
import { TaskError } from '../model/errors';
import { resolvePlaceholders } from '../model/placeholders';
import type { RED, RedNode } from '../model/red';
import type { TokenMessage } from '../model/session';
import { conversationKey, isConversationId } from './conversation';
import type { TeamChatEnvironments } from './environment';
import { TEAMCHAT_CHANNEL, type TeamChatBinding } from './inbound';
import type { TeamChatSettings } from './settings';
import { slackFailure } from './slack-api';
import { teamchatOpening, type TeamChatOpening } from './starts';

export interface MessageFirstConfig {
  environment?: string;
  variable?: string;
  user?: string;
  userType?: string;
  channel?: string;
  channelType?: string;
}

/** The value of `{teamchat}` a Message first Session begins with (as a start's, plus its direction). */
function outboundOpening(value: TeamChatOpening) {
  const opening = teamchatOpening(value);
  return { ...opening, value: { ...opening.value, direction: 'outbound' } };
}

/**
 * `teamchat-open` (Message first): a Session toward a person on Slack, in a direct message with
 * the user (`conversations.open`) or in the channel given. The next Task posts the first message;
 * with Use Threads for Replies that post opens the Session's thread, where the person's reply
 * continues it (without threads, a reply in the conversation does, by the Session Mode's key).
 */
export function messageFirstKind(): StartKind {
  return {
    type: 'teamchat-open',
    channel: TEAMCHAT_CHANNEL,
    // In the Test chat `{teamchat}.channel` is the Channel the test plays, as a team-chat start's is.
    testOpening(testData, channel) {
      const str = (v: unknown) => (typeof v === 'string' ? v.trim() : '');
      // The test data's `vars` stand for the input message's `msg.vars`, as on Call out.
      const vars = testVars(testData);
      const opening = outboundOpening({
        text: str(testData.text),
        files: fileList([]),
        from: str(testData.user) || 'U0TESTUSER',
        profileName: '',
        to: str(testData.channel) || 'D0TESTCHAT',
        team: '',
        thread: '',
        messageId: '',
        channel: channel === TEAMCHAT_CHANNEL ? TEAMCHAT_CHANNEL : 'Chat',
        isTest: true,
      });
      return vars ? { ...opening, vars } : opening;
    },
  };
}

/** What a message that reaches Message first asks for; 3005 / 4008 / 4001 before anything is recorded or posted. */
export async function messageFirstTarget(
  red: RED,
  environments: TeamChatEnvironments,
  node: RedNode,
  config: MessageFirstConfig,
  msg: TokenMessage,
  environment: string,
): Promise<OutTarget> {
  const env = environments.get(environment);
  if (!env) throw new TaskError(4008, `The team-chat Environment ${environment} is not deployed; nothing was posted`);
  const user = await field(red, node, msg, 'user', config.user, config.userType);
  const given = await field(red, node, msg, 'channel', config.channel, config.channelType);
  if (!user.value && !given.value) {
    throw new TaskError(
      3005,
      `${user.where} and ${given.where} are both empty: give a user id to message directly, or a channel to post in; nothing was posted`,
    );
  }
  const mode = env.settings.sessionMode;
  if (mode === 'PerUserPerChannel' && !user.value) {
    throw new TaskError(
      3005,
      `${user.where} is empty: in the Session Mode PerUserPerChannel only the user's reply continues a Session, so a user id is needed; nothing was posted`,
    );
  }
  if (given.value && !isConversationId(given.value) && !keyedByFirstPost(env.settings)) {
    const settings = mode === 'PerThread' ? 'PerThread without Use Threads for Replies' : mode;
    throw new TaskError(
      3005,
      `${given.where} is "${given.value}", not a conversation id: in the Session Mode ${settings} a reply continues a Session by its conversation's id, so an id is needed (C…, G…, D…), or a user id (U…, W…) in ${user.where} for a direct message; nothing was posted`,
    );
  }
  const client = env.client();
  let channel = given.value;
  if (!channel) {
    try {
      const opened = await client.conversations.open({ users: user.value });
      channel = opened.channel?.id ?? '';
    } catch (err) {
      throw slackFailure(err, `Opening a direct message with user ${user.value}`);
    }
    if (!channel) throw new TaskError(4001, `Opening a direct message with user ${user.value}: Slack answered no channel`);
  }
  const team = (await env.identity()).team ?? '';
  // PerThread: the Session's first post opens its thread and the Session moves to that thread's
  // key; until then it has one of its own, so every Message first opens a Session of its own.
  const conversation =
    mode === 'PerThread' ? `${channel}/open-${randomBytes(8).toString('hex')}` : conversationKey(mode, { channel, user: user.value, threadTs: '' });
  const binding: TeamChatBinding = { channel, thread: '', user: user.value, team };
  const text = typeof msg.payload === 'string' ? msg.payload : '';
  return {
    conversation,
    who: user.value ? `User ${user.value} (in ${channel})` : `Channel ${channel}`,
    request: {
      channel: TEAMCHAT_CHANNEL,
      binding: binding as unknown as Record<string, unknown>,
      opening: outboundOpening({
        text,
        files: fileList([]),
        from: user.value,
        profileName: '',
        to: channel,
        team,
        thread: '',
        messageId: '',
        channel: TEAMCHAT_CHANNEL,
        isTest: false,
      }),
    },
  };
}

/**
 * Whether the Session's key is set by its first post (PerThread with threads: the post opens the
 * thread, and Slack's answer gives the channel's id, behaviour.ts). Only then may the channel be
 * given by name or as a user id; in the other modes the key is the channel's from the start, and
 * replies, which carry the id, would never reach a key made of a name.
 */
function keyedByFirstPost(settings: TeamChatSettings): boolean {
  return settings.sessionMode === 'PerThread' && settings.useThreads;
}

/**
 * The user or channel as the node says (default `msg.<name>`). Typed-in text resolves placeholders
 * of the input's `msg.vars` (the new Session's first variables), as the edit dialog accepts them.
 */
async function field(red: RED, node: RedNode, msg: TokenMessage, name: 'user' | 'channel', value: string | undefined, type: string | undefined) {
  const fieldType = type || 'msg';
  const property = value || (fieldType === 'msg' ? name : '');
  const where = fieldType === 'str' ? name : `${name} (${fieldType}.${property})`;
  if (fieldType === 'str' && !property) return { value: '', where };
  return { value: (await readField(red, node, msg, property, fieldType, (t) => resolvePlaceholders(t, msg.vars))).trim(), where };
}
