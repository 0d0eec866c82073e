/**
 * Engine errors with stable codes.
 *
 * Every error that crosses a boundary (CLI, API contract, history) is an {@link EngineError}
 * carrying a SCREAMING_SNAKE `code`, a human `message` that names the offending field, optional
 * structured `details`, and a `kind` that tells callers what to do about it:
 * - `user`: bad input the caller can fix (invalid DSL, bad variables, unknown id);
 * - `transient`: may succeed if tried again (SQLITE_BUSY, network, 5xx);
 * - `unexpected`: a bug or a broken environment.
 */
import { ErrorCodes, type ErrorCode } from './vocabulary';

export { ErrorCodes, type ErrorCode };

/** What a caller can do about an error (see the module doc). */
export type ErrorKind = 'user' | 'transient' | 'unexpected';

/** Options of an {@link EngineError}. */
export interface EngineErrorOptions {
  /** Structured data for UIs (e.g. the list of validation problems). */
  details?: unknown;
  /** Defaults from the code: see {@link defaultKind}. */
  kind?: ErrorKind;
  /** Whether a node failing with this error may be retried by its retry policy. */
  retryable?: boolean;
  cause?: unknown;
}

const USER_CODES: ReadonlySet<string> = new Set([
  'INVALID_WORKFLOW',
  'INVALID_INPUT',
  'INVALID_VARIABLES',
  'NOT_FOUND',
  'CONFLICT',
  'INVALID_STATE',
  'DATABASE_NEWER',
  'DATABASE_READONLY',
]);

function defaultKind(code: ErrorCode): ErrorKind {
  if (USER_CODES.has(code)) return 'user';
  if (code === 'DATABASE_BUSY' || code === 'DATABASE_UNAVAILABLE' || code === 'DATABASE_FULL' || code === 'TIMEOUT' || code === 'HTTP_ERROR') return 'transient';
  return 'unexpected';
}

/**
 * An error with a stable {@link ErrorCode}.
 *
 * `retryable` defaults to true for handler failures and false for user errors, result-size
 * violations and expression errors (they fail the same way every time).
 */
export class EngineError extends Error {
  readonly code: ErrorCode;
  readonly kind: ErrorKind;
  readonly details: unknown;
  readonly retryable: boolean;

  constructor(code: ErrorCode, message: string, options: EngineErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'EngineError';
    this.code = code;
    this.kind = options.kind ?? defaultKind(code);
    this.details = options.details;
    this.retryable =
      options.retryable ??
      !(this.kind === 'user' || code === 'RESULT_TOO_LARGE' || code === 'INVALID_RESULT' || code === 'EXPRESSION_ERROR');
  }

  /** The plain-data form stored in history and sent over the API. */
  toJSON(): SerializedError {
    return serializeError(this);
  }
}

/** An error as plain data: what history rows, dead letters and API results carry. */
export interface SerializedError {
  code: string;
  message: string;
  details?: unknown;
  retryable?: boolean;
}

/**
 * Turns anything thrown into {@link SerializedError}.
 *
 * Non-EngineErrors become `HANDLER_ERROR` (retryable) with their message; their `name` is kept
 * in details so "TypeError" stays visible.
 */
export function serializeError(err: unknown): SerializedError {
  if (err instanceof EngineError) {
    const out: SerializedError = { code: err.code, message: err.message, retryable: err.retryable };
    if (err.details !== undefined) out.details = err.details;
    return out;
  }
  if (err instanceof Error) {
    return { code: 'HANDLER_ERROR', message: err.message, details: { name: err.name }, retryable: true };
  }
  return { code: 'HANDLER_ERROR', message: String(err), retryable: true };
}
