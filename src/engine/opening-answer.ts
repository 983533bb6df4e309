import type { FileList } from '../files/file-values';
import type { SessionRecord } from '../model/session';

/** The opening message as an answer: what an InputTask stores when it takes it. */
export interface OpeningAnswer {
  text: string;
  /** The opening's files, already kept when the Session opened. */
  files: FileList;
  answerFields?: Record<string, unknown>;
}

/**
 * With the shared Start on messaging, the opening message answers the Session's
 * first InputTask. It is held from the start until the Session first waits: an InputTask reached
 * before that takes it instead of prompting; any wait drops it. Keyed by the live Session object,
 * so it is never stored with the Session and goes when the Session does.
 */
const held = new WeakMap<SessionRecord, OpeningAnswer>();

export function holdOpeningAnswer(session: SessionRecord, answer: OpeningAnswer): void {
  held.set(session, answer);
}

export function takeOpeningAnswer(session: SessionRecord): OpeningAnswer | undefined {
  const answer = held.get(session);
  held.delete(session);
  return answer;
}

export function dropOpeningAnswer(session: SessionRecord): void {
  held.delete(session);
}
