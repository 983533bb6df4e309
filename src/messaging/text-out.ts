import type { StartKind } from '../engine/starts';
import { testVars } from '../model/test-vars';
import type { ChannelName } from '../model/channels';
import { fileList } from '../files/file-values';
import type { OutTarget } from '../kit/out-node';
import { readField } from '../kit/typed-field';
import { TaskError } from '../model/errors';
import { resolvePlaceholders } from '../model/placeholders';
import type { RED, RedNode } from '../model/red';
import type { TokenMessage } from '../model/session';
import { channelOf, isMessengerAddress, isNumberAddress, MESSENGER_PREFIX, pairKey, providerAddress, withMessengerPrefix } from './addresses';
import { displayName } from './environment';
import type { MessagingModule } from './messaging-module';
import { accountCredentials } from './provider-client';
import { messageOpening } from './starts';

export interface TextOutConfig {
  environment?: string;
  variable?: string;
  to?: string;
  toType?: string;
  from?: string;
  fromType?: string;
}

/** A sample pair for test chats whose test data names none. */
const SAMPLE = { to: '+15555550100', from: '+15555550199' };

/**
 * `telco-message-out` (Text out): the pair's SMS Session, or its WhatsApp Session when both
 * addresses carry `whatsapp:`, opened toward the person; `{message}` is written as the start
 * endpoint writes it, with `direction: "outbound"`, and the next Task sends the first message.
 */
export function textOutKind(): StartKind {
  return {
    type: 'telco-message-out',
    channel: 'TelcoMessagingSms',
    // Played in the Test chat, the addresses choose the Channel as they do for a message that reaches the node.
    plays: { channels: ['TelcoMessagingSms', 'TelcoMessagingMessenger'], pick: (testData) => channelOf(testPair(testData).to) },
    testOpening(testData, channel) {
      const { to, from } = testPair(testData);
      const text = typeof testData.text === 'string' ? testData.text : '';
      // The test data's `vars` stand for the input message's `msg.vars`, as on Call out.
      const vars = testVars(testData);
      return { ...outboundOpening(channel, to, from, text, true), ...(vars ? { vars } : {}) };
    },
  };
}

/**
 * The pair a test Session is opened with: the test data's, else a sample. One address with
 * `whatsapp:` means WhatsApp, so the other gets it too, as the messenger start's test data does
 * (a message that reaches the node with one prefix is refused with 3005 instead).
 */
function testPair(testData: Record<string, unknown>): { to: string; from: string } {
  const str = (v: unknown) => (typeof v === 'string' ? v.trim() : typeof v === 'number' ? String(v) : '');
  const to = str(testData.to) || SAMPLE.to;
  const from = str(testData.from) || SAMPLE.from;
  if (!isMessengerAddress(to) && !isMessengerAddress(from)) return { to, from };
  return { to: providerAddress(withMessengerPrefix(to)), from: providerAddress(withMessengerPrefix(from)) };
}

function outboundOpening(channel: ChannelName, person: string, ours: string, text: string, isTest: boolean) {
  const opening = messageOpening(channel, { text, from: person, to: ours, messageId: '', profileName: '' }, fileList([]), isTest);
  return { ...opening, value: { ...opening.value, direction: 'outbound' } };
}

/** What a message that reaches Text out asks for, or 3005 / 4008 before anything is recorded or sent. */
export async function textOutTarget(
  red: RED,
  messaging: MessagingModule,
  node: RedNode,
  config: TextOutConfig,
  msg: TokenMessage,
  environment: string,
): Promise<OutTarget> {
  const env = messaging.environments.get(environment);
  if (!env) throw new TaskError(4008, `The messaging Environment ${environment} is not deployed; nothing was sent`);
  accountCredentials(env);
  const to = await address(red, node, msg, 'to', config.to, config.toType, "the person's number");
  const from = await address(red, node, msg, 'from', config.from, config.fromType, 'our number');
  if (isMessengerAddress(to) !== isMessengerAddress(from)) {
    const bare = isMessengerAddress(to) ? 'from' : 'to';
    throw new TaskError(
      3005,
      `${bare} "${bare === 'to' ? to : from}" lacks the ${MESSENGER_PREFIX} prefix the other address has: both carry it (WhatsApp) or neither (SMS); nothing was sent`,
    );
  }
  const channel = channelOf(to);
  const text = typeof msg.payload === 'string' ? msg.payload : '';
  return {
    conversation: pairKey(to, from),
    who: `${to} (with ${from} of "${displayName(env)}")`,
    request: { channel, binding: { user: to, ours: from }, opening: outboundOpening(channel, to, from, text, false) },
  };
}

/**
 * A field read as the node says (default `msg.<name>`), required and in E.164 (after any `whatsapp:`).
 * Typed-in text resolves placeholders of the input's `msg.vars` (the new Session's first variables),
 * as Call out's To does and the edit dialog accepts (`{customer.phone}`).
 */
async function address(
  red: RED,
  node: RedNode,
  msg: TokenMessage,
  name: 'to' | 'from',
  value: string | undefined,
  type: string | undefined,
  what: string,
): Promise<string> {
  const fieldType = type || 'msg';
  const property = value || (fieldType === 'msg' ? name : '');
  const where = fieldType === 'str' ? name : `${name} (${fieldType}.${property})`;
  const read = (await readField(red, node, msg, property, fieldType, (t) => resolvePlaceholders(t, msg.vars))).trim();
  if (!read) throw new TaskError(3005, `${where}: ${what} is missing; nothing was sent`);
  if (!isNumberAddress(read))
    throw new TaskError(3005, `${where}: "${read}" is not a number in E.164 form (+ and up to 15 digits, e.g. +15551234567); nothing was sent`);
  return providerAddress(read);
}
