import type { SessionRecord } from '../../src/model/session';
import type { SessionStore } from '../../src/stores/session-store';

/**
 * A Session record as the engine commits it (format 2, waiting at an InputTask), for tests that
 * talk to a store directly; each test names what matters to it in `fields`.
 */
export function sessionRecord(fields: Partial<SessionRecord> & Pick<SessionRecord, 'id'>): SessionRecord {
  return {
    v: 2,
    channel: 'TelcoMessagingSms',
    environment: 'env1',
    process: 'p1',
    key: fields.id,
    isTest: false,
    vars: {},
    binding: {},
    waitingAt: { nodeId: 'ask', nodeType: 'input-task', since: 1 },
    historyLines: 0,
    log: [],
    created: 1,
    lastActivity: Date.now(),
    state: 'waiting',
    ...fields,
  };
}

/** One step of a conversation as the worker makes it: the lease, the commit of the Session as it now stands, the release. */
export async function commitStep(store: SessionStore, session: SessionRecord, conversation = session.key): Promise<void> {
  const lease = await store.claim({ environment: session.environment, conversation }, 'me', 5000);
  if (!lease) throw new Error(`the conversation ${conversation} is held`);
  await store.commit({ lease, session });
  await store.release(lease);
}
