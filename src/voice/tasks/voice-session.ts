import { TaskError } from '../../model/errors';
import type { SessionRecord } from '../../model/session';

/**
 * Voice Tasks act on a call, or show in the test chat (a test Session on Chat, or one playing a
 * call); any other Channel has no call to act on, in the test chat as for real.
 */
export function requireCall(session: SessionRecord, nodeType: string): 'call' | 'chat' {
  if (showsInTestChat(session)) return 'chat';
  if (session.channel === 'TelcoVoice') return 'call';
  throw new TaskError(4012, `${nodeType} needs a phone call; this Session runs on ${session.channel}`);
}

/**
 * Whether a voice Task shows in the test chat rather than acting on a call. A Task that waits asks
 * this again when it resumes, so both halves take the same path whichever Channel the test plays.
 */
export function showsInTestChat(session: Pick<SessionRecord, 'isTest' | 'channel'>): boolean {
  return session.isTest && (session.channel === 'TelcoVoice' || session.channel === 'Chat');
}
