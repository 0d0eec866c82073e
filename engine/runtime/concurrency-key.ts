/**
 * The concurrency slot of a new instance (DSL `concurrency.key`, engine/runtime/state-machine/concurrency.ts):
 * the key expression evaluated over the start variables, before the transaction that creates the
 * instance (an expression is async; a transaction is not).
 */
import { EngineError } from '../errors';
import { evaluateExpression, quote } from '../dsl/expression-core';
import { concurrencyKey } from '../store/queries';
import { unstorableText } from '../vocabulary';
import type { CompiledWorkflow } from './compiled';

/**
 * The concurrency key of an instance of `wf` started with `variables`: `<name>` U+001F `<value>`,
 * the name alone when the limit has no key; undefined when the workflow has no limit.
 *
 * @throws EngineError INVALID_VARIABLES naming `concurrency.key` when the expression fails or
 *   yields anything but a string, number or boolean (nothing included), or a string a backend
 *   cannot store as given (a NUL, a lone surrogate).
 */
export async function slotFor(wf: CompiledWorkflow, variables: Record<string, unknown>): Promise<string | undefined> {
  const c = wf.def.concurrency;
  if (c === undefined) return undefined;
  if (c.key === undefined) return concurrencyKey(wf.name, undefined);
  let value: unknown;
  try {
    value = await evaluateExpression(c.key, { variables });
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    throw new EngineError('INVALID_VARIABLES', `concurrency.key ${quote(c.key)} of workflow "${wf.name}" failed: ${message}`, { retryable: false });
  }
  const unstorable = typeof value === 'string' ? unstorableText(value) : undefined;
  if (unstorable) {
    throw new EngineError('INVALID_VARIABLES', `concurrency.key ${quote(c.key)} of workflow "${wf.name}" yielded a string that ${unstorable}`, {
      retryable: false,
      details: { field: 'concurrency.key' },
    });
  }
  if (typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value))) return concurrencyKey(wf.name, value);
  const got = value === undefined ? 'no value' : value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value === 'object' ? 'an object' : typeof value;
  throw new EngineError('INVALID_VARIABLES', `concurrency.key ${quote(c.key)} of workflow "${wf.name}" must yield a string, number or boolean; it yielded ${got}`, {
    retryable: false,
    details: { field: 'concurrency.key' },
  });
}
