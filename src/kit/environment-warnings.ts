import { isUsableApiUrl } from '../http/api-url';
import type { RED, RedNode } from '../model/red';
import { runtimeText } from '../model/texts';

/**
 * What every kind of Environment says in the deploy log about its own set-up, in the same words
 * whichever module it belongs to (the log line already names the node).
 */
export const ENVIRONMENT_WARNINGS = {
  /** The editor gives an Environment its token when it is created or imported; a flow deployed another way may have none. */
  noToken: (red: RED) => runtimeText(red, 'core', 'runtime.environment.noToken'),
  signaturesOff: (red: RED) => runtimeText(red, 'core', 'runtime.environment.signaturesOff'),
};

/** A credential the channel needs and the Environment lacks, with what it stops (a flow author's words). */
export interface MissingCredential {
  field: string;
  effect: string | string[];
}

/** The start nodes' yellow status for what is missing (short: a status has little room). */
export function missingStatus(red: RED, missing: Array<{ field: string }>): string {
  return runtimeText(red, 'core', 'runtime.status.missing', { fields: missing.map((m) => m.field).join(', ') });
}

/**
 * A setting the Environment has but its channel cannot use, with the deploy log's line for it. The
 * editor flags such values, but a flow imported or deployed through the admin API is not checked
 * there, and the first call through it would fail in words that blame the provider.
 */
export interface UnusableSetting {
  field: string;
  line: string;
}

/** An `apiUrl` the provider calls cannot go through (http/api-url.ts), with what that stops. */
export function apiUrlSetting(red: RED, apiUrl: string, effect: string): UnusableSetting | undefined {
  if (isUsableApiUrl(apiUrl)) return undefined;
  return { field: 'API URL', line: runtimeText(red, 'core', 'runtime.environment.apiUrlUnusable', { url: apiUrl, effects: effect }) };
}

/**
 * Warns once for each unusable setting and gives the start nodes' yellow status for those and what
 * is missing (for `engine.noteMissing`); undefined when the Environment lacks nothing.
 */
export function setUpStatus(red: RED, node: RedNode, missing: Array<{ field: string }>, unusable: UnusableSetting[]): string | undefined {
  for (const setting of unusable) node.warn(setting.line);
  const said = [
    missing.length ? missingStatus(red, missing) : '',
    unusable.length ? runtimeText(red, 'core', 'runtime.status.unusable', { fields: unusable.map((u) => u.field).join(', ') }) : '',
  ];
  return said.filter(Boolean).join(' · ') || undefined;
}

/** Each inbound URL an Environment logs at deploy, worded one way for every module; `full` when a public base URL made it absolute. */
export function urlLine(red: RED, what: string, url: string, full: boolean): string {
  return runtimeText(red, 'core', full ? 'runtime.environment.url' : 'runtime.environment.urlPath', { what, url });
}

function wordList(words: string[]): string {
  return words.length < 2 ? (words[0] ?? '') : `${words.slice(0, -1).join(', ')} and ${words[words.length - 1]}`;
}

/** The nodes of the deployed flows that name this Environment. */
export function usersOf(red: RED, environmentId: string): Array<{ id: string; type: string }> {
  const users: Array<{ id: string; type: string }> = [];
  red.nodes.eachNode((n) => {
    if (n.environment === environmentId) users.push({ id: n.id, type: n.type });
  });
  return users;
}

/** The nodes the given ones lead to, through their wires, the given ones included: what a Session started or sent there goes on to. */
export function downstreamOf(red: RED, fromIds: string[]): Array<{ type: string; [k: string]: unknown }> {
  const byId = new Map<string, { type: string; wires?: unknown; [k: string]: unknown }>();
  red.nodes.eachNode((n) => byId.set(n.id, n));
  const seen = new Set<string>();
  const queue = [...fromIds];
  while (queue.length) {
    const id = queue.shift()!;
    const n = byId.get(id);
    if (!n || seen.has(id)) continue;
    seen.add(id);
    if (Array.isArray(n.wires)) for (const out of n.wires) if (Array.isArray(out)) queue.push(...out.map(String));
  }
  return [...seen].map((id) => byId.get(id)!);
}

/** What some of an Environment's users need and lack: "Call out" needs "a Caller ID" … "to place calls". */
export interface Need {
  who: string;
  /** `who` names several ("Tasks that …"), so it takes "need". */
  plural?: boolean;
  fields: string[];
  purpose: string;
}

/**
 * The one deploy-log line of an Environment that lacks what the nodes using it need, needs with the
 * same fields and purpose said together; undefined when nothing is lacking.
 */
export function needsLine(red: RED, needs: Need[]): string | undefined {
  const lacking = needs.filter((n) => n.fields.length);
  if (!lacking.length) return undefined;
  const merged = new Map<string, { who: string[]; plural: boolean; fields: string[]; purpose: string }>();
  for (const need of lacking) {
    const key = `${need.fields.join('|')}|${need.purpose}`;
    const entry = merged.get(key) ?? { who: [], plural: false, fields: need.fields, purpose: need.purpose };
    entry.plural ||= !!need.plural;
    if (!entry.who.includes(need.who)) entry.who.push(need.who);
    merged.set(key, entry);
  }
  const parts = [...merged.values()].map((m) =>
    runtimeText(red, 'core', m.who.length > 1 || m.plural ? 'runtime.environment.needPlural' : 'runtime.environment.need', {
      who: wordList(m.who),
      fields: wordList(m.fields),
      purpose: m.purpose,
    }),
  );
  const line = runtimeText(red, 'core', 'runtime.environment.needs', { needs: parts.join('; ') });
  // A need may begin with a word that is lower case inside a sentence ("the Event URL needs …").
  return line.charAt(0).toUpperCase() + line.slice(1);
}

/** "the Account SID and Auth Token" of those missing, as one field of a need. */
export function credentialsField(red: RED, missing: string[]): string[] {
  return missing.length ? [runtimeText(red, 'core', 'runtime.environment.theCredentials', { fields: wordList(missing) })] : [];
}
