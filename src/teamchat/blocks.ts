import { TaskError } from '../model/errors';
import { lookupPath, resolvePlaceholders, soloPlaceholder } from '../model/placeholders';
import { escapeSlackText } from './escape';

/**
 * Block Kit JSON of a TeamChatBlockMessage: a JSON array of blocks, one block, or an object with a
 * `blocks` array. Placeholders are resolved inside string values after parsing, as escaped text,
 * so a person's text can never add blocks, buttons, links or pings. A string that is exactly one
 * placeholder takes the variable's value as JSON itself (a list of blocks kept in a variable).
 */
export function buildBlocks(template: string, vars: Record<string, unknown>): unknown[] {
  const source = (template ?? '').trim();
  if (!source) throw new TaskError(3005, 'Block Kit JSON is empty');
  let parsed: unknown;
  const whole = soloPlaceholder(source);
  if (whole) parsed = asJson(lookupPath(vars, whole));
  else {
    try {
      parsed = JSON.parse(source);
    } catch (err) {
      throw new TaskError(3005, `Block Kit JSON is not valid JSON: ${(err as Error).message}`);
    }
    parsed = substitute(parsed, vars);
  }
  return validBlocks(parsed);
}

function substitute(value: unknown, vars: Record<string, unknown>): unknown {
  if (typeof value === 'string') {
    const path = soloPlaceholder(value);
    if (path && value.trim() === value) {
      const found = lookupPath(vars, path);
      if (typeof found !== 'string') return found === undefined ? '' : asJson(found);
    }
    return resolvePlaceholders(value, vars, escapeSlackText);
  }
  if (Array.isArray(value)) return value.map((v) => substitute(v, vars));
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substitute(v, vars)]));
  }
  return value;
}

/** A variable holding JSON text is parsed; objects and arrays are used as they are. */
function asJson(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value);
  } catch {
    throw new TaskError(3005, 'Block Kit JSON: the variable does not hold JSON');
  }
}

function validBlocks(parsed: unknown): unknown[] {
  let blocks: unknown;
  if (Array.isArray(parsed)) blocks = parsed;
  else if (isObject(parsed) && Array.isArray(parsed.blocks)) blocks = parsed.blocks;
  else if (isObject(parsed) && typeof parsed.type === 'string') blocks = [parsed];
  else throw new TaskError(3005, 'Block Kit JSON must be an array of blocks, one block, or an object with a blocks array');
  const list = blocks as unknown[];
  if (!list.length) throw new TaskError(3005, 'Block Kit JSON has no blocks');
  list.forEach((block, i) => {
    if (!isObject(block) || typeof block.type !== 'string' || !block.type) {
      throw new TaskError(3005, `Block Kit JSON: block ${i + 1} has no type`);
    }
  });
  return list;
}

function isObject(value: unknown): value is Record<string, any> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
