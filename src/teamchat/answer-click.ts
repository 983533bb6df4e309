import type { InboundReader } from '../engine/delivery';
import type { Engine } from '../engine/engine';
import type { SessionRecord } from '../model/session';
import type { Click } from './click';
import { conversationKey } from './conversation';
import type { TeamChatEnvironment, TeamChatEnvironments } from './environment';
import { sendEphemeralNote } from './ephemeral-note';
import { SLACK_EFFECT } from './posting';
import { notFindable } from './effect-lookup';
import { TEAMCHAT_CHANNEL, type TeamChatBinding } from './inbound';
import { posted } from './posted';

export const CLICK_KIND = 'teamchat-click';
export const ENDED_NOTE = 'This conversation has ended.';
export const NOT_YOURS_NOTE = 'This conversation belongs to someone else, so your choice was not used.';

/** Slack does not retry a click for long; an hour is plenty. */
const CLICK_KEPT_MS = 60 * 60 * 1000;
/** How many live Sessions a click on a message outside its conversation's key is looked for among. */
const SEARCHED = 500;

interface RecordedClick {
  click: Click;
}

/**
 * Before the acknowledgement: a click is recorded in the conversation of the live Session that
 * posted the message, once per Slack trigger, and answers there (clickReader). A click on a
 * message no live Session posted is not recorded; the person gets the note after the
 * acknowledgement (`firstNote` keeps a redelivery from sending it twice).
 */
export async function recordClick(
  engine: Engine,
  env: TeamChatEnvironment,
  click: Click,
  triggerId: string,
  firstNote: (key: string) => boolean,
): Promise<void> {
  const conversation = await conversationOfClick(engine, env, click);
  if (!conversation) {
    env.node.debug(`click ${click.action.action_id} on ${click.channel}/${click.messageTs}: no live Session posted that message`);
    if (firstNote(`${env.id}/${triggerId}`)) setImmediate(() => void sendEphemeralNote(env, click, ENDED_NOTE));
    return;
  }
  const payload: RecordedClick = { click };
  const accepted = await engine.accept({
    environment: env.id,
    conversation,
    kind: CLICK_KIND,
    payload,
    dedupe: { key: `teamchat-click/${env.id}/${triggerId}`, ttlMs: CLICK_KEPT_MS },
  });
  if (accepted === 'duplicate') env.node.debug(`click ${triggerId} already recorded; handled once`);
}

/**
 * A recorded click, read inside its conversation's step: it answers the waiting InputTask like a
 * typed reply (the Store variable gets the value, `<variable>_action` the fields) when the live
 * Session posted the message and the person may continue it under the Session Mode. Otherwise
 * nothing runs and the person gets an ephemeral note.
 */
export function clickReader(engine: Engine, environments: TeamChatEnvironments): InboundReader {
  return async (item, live) => {
    const env = environments.get(item.environment);
    if (!env) return undefined;
    const { click } = item.payload as RecordedClick;
    // The note is an effect of the click's step: a step that runs again does not send it twice.
    const note = (text: string) =>
      engine.itemEffect(
        item,
        SLACK_EFFECT.ephemeral,
        async () => {
          await sendEphemeralNote(env, click, text);
          return {};
        },
        { lookup: notFindable('an ephemeral note') },
      );
    if (!live || live.state !== 'waiting' || !posted(live, click.channel, click.messageTs)) {
      await note(ENDED_NOTE);
      return undefined;
    }
    if (!mayContinue(env, live, click.user)) {
      await note(NOT_YOURS_NOTE);
      return undefined;
    }
    return {
      channel: TEAMCHAT_CHANNEL,
      message: { text: click.action.value, said: click.action.text, files: [], answerFields: { action: click.action } },
      mayStart: false,
    };
  };
}

/**
 * The conversation of the live Session that posted the clicked message. The click's own
 * conversation key is tried first (a thread in PerThread, the channel in PerChannel, the clicker
 * in PerUserPerChannel); otherwise (top-level posts with threads off, someone else's conversation)
 * the most recently active live Sessions are searched.
 */
async function conversationOfClick(engine: Engine, env: TeamChatEnvironment, click: Click): Promise<string | undefined> {
  const where = { channel: click.channel, user: click.user, ts: click.messageTs, threadTs: click.threadTs };
  const key = conversationKey(env.settings.sessionMode, where);
  const likely = await engine.liveSessionFor(env.id, key);
  if (likely && posted(likely, click.channel, click.messageTs)) return key;
  const found = (await engine.liveSessions(SEARCHED)).find(
    (s) => s.environment === env.id && s.channel === TEAMCHAT_CHANNEL && !s.isTest && posted(s, click.channel, click.messageTs),
  );
  return found?.key;
}

/** Who may continue a Session: anyone in its thread or channel, but in PerUserPerChannel only its user. */
function mayContinue(env: TeamChatEnvironment, session: SessionRecord, user: string): boolean {
  if (env.settings.sessionMode !== 'PerUserPerChannel') return true;
  return (session.binding as Partial<TeamChatBinding>).user === user;
}
