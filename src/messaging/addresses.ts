import type { ChannelName } from '../model/channels';
import { isE164 } from '../model/phone-number';

/** Messenger addresses carry this prefix on both sides (`whatsapp:+15551234567`). */
export const MESSENGER_PREFIX = 'whatsapp:';

export function isMessengerAddress(address: string): boolean {
  return address.toLowerCase().startsWith(MESSENGER_PREFIX);
}

/** The Channel an inbound message belongs to, by the user's address. */
export function channelOf(from: string): ChannelName {
  return isMessengerAddress(from) ? 'TelcoMessagingMessenger' : 'TelcoMessagingSms';
}

/**
 * The address as the provider writes it, its prefix in lower case: the person's answers and the
 * delivery statuses come that way, and find their Session by the address it was opened with.
 */
export function providerAddress(address: string): string {
  return isMessengerAddress(address) ? MESSENGER_PREFIX + address.slice(MESSENGER_PREFIX.length) : address;
}

/** A number in E.164 form (+ and up to 15 digits), after any `whatsapp:` prefix: what the provider sends to. */
export function isNumberAddress(address: string): boolean {
  return isE164(isMessengerAddress(address) ? address.slice(MESSENGER_PREFIX.length) : address);
}

export function withMessengerPrefix(address: string): string {
  if (!address || isMessengerAddress(address)) return address;
  return MESSENGER_PREFIX + address;
}

/** One Session per pair of numbers: the user's number and the number they wrote to. */
export function pairKey(user: string, ours: string): string {
  return `${user}>${ours}`;
}

/** Where a Session's replies go: to the user, from the number the user wrote to. */
export interface PairBinding {
  user: string;
  ours: string;
}

export function bindingOf(binding: Record<string, unknown>): PairBinding | undefined {
  const user = binding.user;
  const ours = binding.ours;
  return typeof user === 'string' && typeof ours === 'string' && user && ours ? { user, ours } : undefined;
}
