/**
 * Turning an aborted `ctx.signal` into the error a handler throws.
 *
 * Built-in handlers share this so that every node type reports an abort the same way, whatever
 * fired it (the node's `timeoutMs`, a cancel, a lost lease).
 */
import { EngineError } from '../errors';

/**
 * The error a handler throws when `signal` was aborted.
 *
 * - the abort reason, if it is already an {@link EngineError} (the runtime may abort with one,
 *   e.g. LEASE_LOST, so its code survives the handler);
 * - `TIMEOUT` (retryable) when the reason is a `TimeoutError` (from `AbortSignal.timeout`);
 * - `CANCELLED` otherwise, with the reason's message in the text.
 */
export function abortError(signal: AbortSignal, what: string): EngineError {
  const reason: unknown = signal.reason;
  if (reason instanceof EngineError) return reason;
  const name = reason instanceof Error || reason instanceof DOMException ? reason.name : undefined;
  if (name === 'TimeoutError') {
    return new EngineError('TIMEOUT', `${what} was stopped: the node timed out`, {
      retryable: true,
      cause: reason,
    });
  }
  const detail = reason instanceof Error ? `: ${reason.message}` : '';
  return new EngineError('CANCELLED', `${what} was stopped: the node was aborted${detail}`, {
    cause: reason,
  });
}

/** Throws {@link abortError} if `signal` is already aborted. */
export function throwIfAborted(signal: AbortSignal, what: string): void {
  if (signal.aborted) throw abortError(signal, what);
}
