import { resolvePlaceholders } from '../model/placeholders';
import type { VoiceEnvironment } from './environment';
import type { Speech } from './verbs';

/**
 * The language prompts are spoken and recognised in: the Environment's Default Language, else the
 * Session's own (`{language}`, as a language Task sets it, or `{execution.language}`), else none
 * (the provider's standard).
 */
export function languageFor(env: VoiceEnvironment | undefined, vars: Record<string, unknown>): string | undefined {
  if (env?.defaultLanguage) return env.defaultLanguage;
  const own = vars.language ?? (vars.execution as Record<string, unknown> | undefined)?.language;
  return typeof own === 'string' && own.trim() ? own.trim() : undefined;
}

/** A text template spoken with the Environment's voice. Placeholders resolve to plain text. */
export function speechFor(env: VoiceEnvironment | undefined, vars: Record<string, unknown>, template: string): Speech {
  return {
    text: resolvePlaceholders(template, vars),
    ...(env?.defaultVoice ? { voice: env.defaultVoice } : {}),
    ...(languageFor(env, vars) ? { language: languageFor(env, vars) } : {}),
  };
}
