/** The `event_type` of the metadata each post carries: the effect it is, so a step that runs again can find it (effect-lookup.ts). */
export const EFFECT_EVENT_TYPE = 'channel_sessions_effect';

/** The `metadata` of a post that is the effect `key`. */
export function effectMetadata(key: string): { event_type: string; event_payload: { key: string } } {
  return { event_type: EFFECT_EVENT_TYPE, event_payload: { key } };
}
