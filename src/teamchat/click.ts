/** `<variable>_action`: the button or menu that answered an InputTask. */
export interface SlackAction {
  action_id: string;
  block_id: string;
  /** The button's value, or the selected option's value (several: comma-separated). */
  value: string;
  /** What the person saw: the button's label, or the selected option's text. */
  text: string;
  /** Who clicked. */
  user: string;
}

/** A click or selection on a message, from a `block_actions` payload. */
export interface Click {
  user: string;
  channel: string;
  /** The message the buttons are on. */
  messageTs: string;
  threadTs?: string;
  action: SlackAction;
  responseUrl?: string;
}

type Json = Record<string, any>;

/**
 * Reads a `block_actions` payload (Slack sends one action per payload). Clicks in a modal or the
 * App Home are not on a message a Session posted; they give a reason to ignore them instead.
 */
export function readClick(payload: Json): Click | { ignored: string } {
  if (payload.type !== 'block_actions') return { ignored: `payload type ${payload.type}` };
  const user = text(payload.user?.id);
  if (!user) return { ignored: 'no user' };
  if (payload.container?.type === 'view' || payload.view) return { ignored: 'a click in a modal or App Home' };
  const channel = text(payload.channel?.id) || text(payload.container?.channel_id);
  const messageTs = text(payload.container?.message_ts) || text(payload.message?.ts);
  if (!channel || !messageTs) return { ignored: 'not on a message' };
  const raw = Array.isArray(payload.actions) ? payload.actions[0] : undefined;
  if (!raw || typeof raw !== 'object') return { ignored: 'no action' };
  const { value, label } = answerOf(raw);
  const threadTs = text(payload.message?.thread_ts) || text(payload.container?.thread_ts);
  const responseUrl = text(payload.response_url);
  return {
    user,
    channel,
    messageTs,
    ...(threadTs ? { threadTs } : {}),
    action: { action_id: text(raw.action_id), block_id: text(raw.block_id), value, text: label, user },
    ...(responseUrl ? { responseUrl } : {}),
  };
}

/**
 * The answer an element gives: a button's value (its label when it has none), the selected
 * option of a menu, radio buttons or overflow, the selected options of checkboxes and multi-selects,
 * or the picked user, channel, conversation, date or time.
 */
function answerOf(action: Json): { value: string; label: string } {
  if (typeof action.value === 'string') return { value: action.value, label: textOf(action.text) || action.value };
  if (action.selected_option) return option(action.selected_option);
  if (Array.isArray(action.selected_options)) {
    const options = action.selected_options.map(option);
    return { value: options.map((o: { value: string }) => o.value).join(','), label: options.map((o: { label: string }) => o.label).join(', ') };
  }
  for (const key of ['selected_user', 'selected_channel', 'selected_conversation', 'selected_date', 'selected_time', 'selected_date_time']) {
    if (action[key] !== undefined && action[key] !== null) return { value: String(action[key]), label: String(action[key]) };
  }
  for (const key of ['selected_users', 'selected_channels', 'selected_conversations']) {
    if (Array.isArray(action[key])) return { value: action[key].join(','), label: action[key].join(', ') };
  }
  const label = textOf(action.text);
  return { value: label, label };
}

function option(o: Json): { value: string; label: string } {
  const value = text(o?.value);
  return { value, label: textOf(o?.text) || value };
}

/** A text object (`{type, text}`) or a plain string. */
function textOf(t: unknown): string {
  if (typeof t === 'string') return t;
  return text((t as Json | undefined)?.text);
}

function text(v: unknown): string {
  return typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '';
}
