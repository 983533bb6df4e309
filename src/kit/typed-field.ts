import { TaskError } from '../model/errors';
import { valueAsText } from '../model/placeholders';
import type { RED, RedNode } from '../model/red';

/** The typed-input types an edit dialog offers for a field (Node-RED's `typedInput`). */
export const FIELD_TYPES = ['str', 'msg', 'flow', 'global', 'env'] as const;
export type FieldType = (typeof FIELD_TYPES)[number];

/**
 * A field that is either the author's text (`str`, or no type at all: flows saved before typed
 * inputs existed) resolved by the Task's own `resolve` (placeholders, escaping), or a value read
 * from msg/flow/global/env with Node-RED's own `evaluateNodeProperty`, which is used as is: the
 * caller validates the result the same way in both cases.
 */
export async function readField(
  red: RED,
  node: RedNode,
  msg: unknown,
  value: string | undefined,
  type: string | undefined,
  resolve: (text: string) => string,
): Promise<string> {
  if (!type || type === 'str') return resolve(value ?? '');
  if (!(FIELD_TYPES as readonly string[]).includes(type)) throw new TaskError(3005, `Unknown field type "${type}" (one of ${FIELD_TYPES.join(', ')})`);
  if (!value) throw new TaskError(3005, `No ${type} property name given`);
  const found = await new Promise<unknown>((resolved, rejected) => {
    try {
      // The callback form also serves asynchronous context stores.
      red.util.evaluateNodeProperty(value, type, node, msg, (err, result) =>
        err ? rejected(err instanceof Error ? err : new Error(String(err))) : resolved(result),
      );
    } catch (err) {
      rejected(err instanceof Error ? err : new Error(String(err)));
    }
  }).catch((err: unknown) => {
    throw new TaskError(3005, `Cannot read ${type}.${value}: ${err instanceof Error ? err.message : String(err)}`);
  });
  return valueAsText(found);
}
