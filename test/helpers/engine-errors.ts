/**
 * The EngineError a call throws or a promise rejects with, for tests that assert on its code,
 * message and details; anything else (no error, or an error of another kind) fails the test.
 */
import { expect } from 'vitest';
import { EngineError } from '../../engine/errors';

/** The EngineError `fn` throws. */
export function thrownBy(fn: () => unknown): EngineError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(EngineError);
    return err as EngineError;
  }
  throw new Error('expected an EngineError to be thrown');
}

/** The EngineError `promise` rejects with. */
export async function rejectionOf(promise: Promise<unknown>): Promise<EngineError> {
  const outcome = await promise.then(
    (value: unknown) => ({ value }),
    (error: unknown) => ({ error }),
  );
  if (!('error' in outcome)) throw new Error(`expected a rejection, got ${JSON.stringify(outcome.value)}`);
  expect(outcome.error).toBeInstanceOf(EngineError);
  return outcome.error as EngineError;
}
