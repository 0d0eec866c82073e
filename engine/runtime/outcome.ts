/**
 * The outcome sequence of a node result, written once: the size check, the `output` mapping into
 * the globals (and their size check), and the decisions of the edges leaving the node.
 *
 * It evaluates expressions, so it runs before the transaction that records the result: for a
 * handler's result (the worker), an approval's decision and a skip's given result alike.
 */
import { EngineError } from '../errors';
import { applyOutput, evaluateWhen, type ExpressionScope } from '../dsl/expressions';
import { describeValueProblem, findValueProblem } from '../dsl/value-limits';
import type { CompiledEdge, CompiledNode } from './compiled';
import type { EdgeDecision } from './state-machine/node';

/** A node result ready to record: the result, what it merges into the globals, and its edges' decisions. */
export interface SettledResult {
  output: unknown;
  patch: Record<string, unknown>;
  decisions: EdgeDecision[];
}

/** JSON size in bytes (UTF-8). */
export function jsonBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value ?? null), 'utf8');
}

/** Evaluates the `when` of `edges` against a scope; returns a decision per edge. */
export async function decideEdges(edges: readonly CompiledEdge[], scope: ExpressionScope): Promise<EdgeDecision[]> {
  const out: EdgeDecision[] = [];
  for (const e of edges) {
    if (e.when === undefined) {
      out.push({ edgeId: e.id, to: e.to, taken: true });
      continue;
    }
    const r = await evaluateWhen(e.when, scope);
    const d: EdgeDecision = { edgeId: e.id, to: e.to, taken: r.taken };
    if (r.reason !== undefined && r.reason !== 'condition is false') d.reason = r.reason;
    out.push(d);
  }
  return out;
}

/**
 * Settles `output` as the result of `node` in `scope` (the instance's variables and `$steps`):
 * `undefined` becomes null; the result, and the globals after its `output` mapping, must fit
 * `maxBytes` (DESIGN.md "Rules pinned"); then the success edges are decided on the globals and
 * steps as they will be.
 *
 * `given`: the result comes from a person (an approval decision, a skip's result), so a size
 * violation is theirs to fix (`kind: 'user'`) and the message says "the given result".
 *
 * @throws EngineError RESULT_TOO_LARGE (above the size or nesting limit), INVALID_RESULT (a
 *   `__proto__` key, or a number JSON cannot keep: Infinity, NaN), neither retryable;
 *   EXPRESSION_ERROR from the mapping or a `when`.
 */
export async function settleResult(node: CompiledNode, output: unknown, scope: ExpressionScope, maxBytes: number, given = false): Promise<SettledResult> {
  const value = output === undefined ? null : output;
  const tooLarge = (what: string, size: number) =>
    new EngineError('RESULT_TOO_LARGE', `node "${node.id}": ${what} ${size} bytes, above the limit of ${maxBytes} bytes`, {
      retryable: false,
      ...(given ? { kind: 'user' as const } : {}),
    });
  // Nested past the limit, the result would overflow the stack of what reads it next.
  const nesting = findValueProblem(value);
  if (nesting) {
    throw new EngineError(nesting.kind === 'deep' || nesting.kind === 'circular' ? 'RESULT_TOO_LARGE' : 'INVALID_RESULT', `node "${node.id}": ${describeValueProblem(given ? 'the given result' : 'its result', nesting)}`, {
      retryable: false,
      ...(given ? { kind: 'user' as const } : {}),
    });
  }
  const size = jsonBytes(value);
  if (size > maxBytes) throw tooLarge(given ? 'the given result is' : 'result is', size);
  const patch = await applyOutput(node.def.output, value, scope);
  const variables = Object.keys(patch).length > 0 ? { ...scope.variables, ...patch } : scope.variables;
  if (variables !== scope.variables) {
    const deep = findValueProblem(variables);
    if (deep) {
      throw new EngineError(deep.kind === 'deep' || deep.kind === 'circular' ? 'RESULT_TOO_LARGE' : 'INVALID_RESULT', `node "${node.id}": ${describeValueProblem('the variables it would make', deep)}`, {
        retryable: false,
        ...(given ? { kind: 'user' as const } : {}),
      });
    }
    const vsize = jsonBytes(variables);
    if (vsize > maxBytes) throw tooLarge(given ? 'the variables would be' : 'variables would be', vsize);
  }
  const decisions = await decideEdges(node.outgoing, { variables, steps: { ...scope.steps, [node.id]: value } });
  return { output: value, patch, decisions };
}
