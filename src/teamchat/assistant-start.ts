import type { RED, RedNode } from '../model/red';
import { runtimeText } from '../model/texts';
import { MAX_PROMPTS, type SuggestedPrompt } from './assistant-threads';
import type { TeamChatModule } from './teamchat-module';

/**
 * The team-chat start's part in assistant threads: its `suggestedPrompts` (at most 4, each a
 * title and a message) are set in each thread Slack opens for its Environment, and its variable
 * names where `{…context}` goes. Until the node closes.
 */
export function serveAssistantThreads(
  red: RED,
  teamchat: TeamChatModule,
  node: RedNode,
  config: { environment?: string; suggestedPrompts?: unknown },
  variable: string,
): void {
  const environment = typeof config.environment === 'string' ? config.environment : '';
  if (!environment) return;
  const rows = Array.isArray(config.suggestedPrompts) ? (config.suggestedPrompts as Array<Record<string, unknown>>) : [];
  const prompts: SuggestedPrompt[] = rows
    .map((p) => ({ title: typeof p?.title === 'string' ? p.title.trim() : '', message: typeof p?.message === 'string' ? p.message.trim() : '' }))
    .filter((p) => p.title && p.message);
  if (prompts.length > MAX_PROMPTS) node.warn(runtimeText(red, 'teamchat', 'runtime.log.tooManyPrompts', { count: prompts.length, max: MAX_PROMPTS }));
  teamchat.assistant.starts.set(environment, { nodeId: node.id, variable, prompts: prompts.slice(0, MAX_PROMPTS) });
  node.on('close', () => {
    if (teamchat.assistant.starts.get(environment)?.nodeId === node.id) teamchat.assistant.starts.delete(environment);
  });
}
