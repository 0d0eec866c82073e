/**
 * Parsing JSON read from the file: text that does not parse is a damaged row (edited by hand, or
 * written by something else), answered as DATABASE_CORRUPT naming where it is, never a bare
 * SyntaxError.
 */
import { EngineError } from '../../errors';

/**
 * `text` parsed; `row` and `column` name where it was read for the error (e.g. `instance 12`,
 * `variables_json`). On the hot path: no closure, no string built unless it fails.
 *
 * @throws EngineError DATABASE_CORRUPT when the text is not JSON.
 */
export function parseStored<T>(text: string, row: string | number, column: string, node?: string): T {
  try {
    return JSON.parse(text) as T;
  } catch (err) {
    const where = node === undefined ? `instance ${row} ${column}` : `node_state (instance ${row}, node "${node}") ${column}`;
    throw new EngineError('DATABASE_CORRUPT', `${where} holds text that is not JSON (${(err as Error).message}): was the row edited by hand?`, {
      cause: err,
      kind: 'user',
      retryable: false,
      details: { where },
    });
  }
}
