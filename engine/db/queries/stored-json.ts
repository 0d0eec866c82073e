/**
 * Parsing JSON read from the file: text that does not parse is a damaged row (edited by hand, or
 * written by something else), answered as DATABASE_CORRUPT naming where it is, never a bare
 * SyntaxError.
 */
import { EngineError } from '../../errors';

/**
 * `text` parsed; `where` names the row and column for the error (e.g. `instance 12 variables_json`).
 *
 * @throws EngineError DATABASE_CORRUPT when the text is not JSON.
 */
export function parseStored<T>(text: string, where: () => string): T {
  try {
    return JSON.parse(text) as T;
  } catch (err) {
    throw new EngineError('DATABASE_CORRUPT', `${where()} holds text that is not JSON (${(err as Error).message}): was the row edited by hand?`, {
      cause: err,
      kind: 'user',
      retryable: false,
      details: { where: where() },
    });
  }
}
