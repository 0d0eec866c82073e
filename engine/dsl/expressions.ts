/**
 * JSONata, the one expression language of the DSL (DESIGN.md section 3): edge `when`, node
 * `input`/`output` mappings and `{{ … }}` templates inside config strings.
 *
 * Expressions see the instance's global variables as `$`, earlier results as `$steps.<nodeId>`,
 * a node's own result as `$result` (in `output`) and a failure as `$error` (on error edges).
 * Nothing else is bound: JSONata has no host access of its own, its property lookup reads own
 * properties only (so `constructor` and `__proto__` are invisible), and no host function is ever
 * registered, so expressions cannot reach `process`, `require`, files or the network.
 *
 * Regular expressions run on RE2 (regex.ts: linear time, whatever the pattern); a literal RE2
 * cannot run (a backreference, a lookaround) is reported before evaluation, as are function
 * signatures jsonata would check with a backtracking pattern (expression-guards.ts); evaluations
 * take turns of a few ms, with the host's other work between them (expression-turns.ts).
 *
 * This module is the entry and holds the mappings (edge `when`, node `input` and `output`); the
 * rest is in files of its own: expression-core.ts (compile, parse, evaluate), expression-templates.ts
 * (`{{ … }}`), expression-scope.ts (the variables an expression reads), beside the guards and turns.
 *
 * Shared with the renderer: imports nothing from Node.
 */
import { EngineError } from '../errors';
import {
  evaluateExpression,
  parseExpression,
  quote,
  type EvaluateOptions,
  type ExpressionScope,
} from './expression-core';
import { describeMissing, missingNames, references } from './expression-scope';

export {
  DEFAULT_EXPRESSION_TIMEOUT_MS,
  MAX_EXPRESSION_DEPTH,
  MAX_EXPRESSION_SEQUENCE,
  evaluateExpression,
  parseExpression,
  type EvaluateOptions,
  type ExpressionScope,
  type ParsedExpression,
} from './expression-core';
export { referencedVariables } from './expression-scope';
export { hasTemplate, renderTemplates, splitTemplate, type TemplatePart } from './expression-templates';

/**
 * Decides an edge's `when` (DESIGN.md "Rules pinned").
 *
 * - A `when` that reads a missing variable is not taken, and `reason` names the missing
 *   variable(s), e.g. `reads missing variable "device"`. A variable only tested by `$exists(…)`
 *   is not a read, so `$not($exists(device))` works as written. The expression is then not
 *   evaluated: its value would rest on a variable the author expected to exist.
 * - `true` → taken; `false` → not taken, reason `condition is false`; no value (`undefined`) →
 *   not taken, reason `condition yielded no value`.
 *
 * @throws EngineError `EXPRESSION_ERROR` when the expression does not parse or evaluate, or
 *   yields anything but a boolean or nothing (this fails the source node).
 */
export async function evaluateWhen(
  src: string,
  scope: ExpressionScope,
  opts: EvaluateOptions = {},
): Promise<{ taken: boolean; reason?: string }> {
  const parsed = parseExpression(src);
  if (!parsed.ok) {
    const problem = parsed.unsupported ? 'cannot run' : 'does not parse';
    throw new EngineError('EXPRESSION_ERROR', `when ${quote(src)} ${problem}: ${parsed.message}`, {
      details: { expression: src, position: parsed.position },
    });
  }
  const missing = missingNames(references(src), scope);
  if (missing.length > 0) return { taken: false, reason: describeMissing(missing) };

  const value = await evaluateExpression(src, scope, opts);
  if (value === true) return { taken: true };
  if (value === false) return { taken: false, reason: 'condition is false' };
  if (value === undefined) return { taken: false, reason: 'condition yielded no value' };
  throw new EngineError(
    'EXPRESSION_ERROR',
    `when ${quote(src)} must yield true or false, got ${describeValue(value)}`,
    { details: { expression: src } },
  );
}

function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return `an array ${truncate(JSON.stringify(value))}`;
  if (typeof value === 'object') return `an object ${truncate(JSON.stringify(value))}`;
  return `${typeof value} ${truncate(JSON.stringify(value))}`;
}

function truncate(s: string): string {
  return s.length > 60 ? `${s.slice(0, 57)}...` : s;
}

/** A variable name an `output` writes to directly (Unicode letters and emoji allowed). */
const IDENTIFIER =
  /^[\p{L}\p{Extended_Pictographic}_$](?:[\p{L}\p{N}\p{M}\p{Extended_Pictographic}_$]|\u200d|\ufe0f)*$/u;

/**
 * Whether `s` is a plain variable name rather than an expression.
 *
 * Letters (any script), digits (not first), `_`, `$` and emoji. An `output` that is an
 * identifier names the variable receiving the result; anything else is JSONata.
 */
export function isIdentifier(s: string): boolean {
  return IDENTIFIER.test(s);
}

/**
 * The patch a node's `output` merges into the globals (DESIGN.md "Scopes").
 *
 * - no `output` → `{}` (the result lives only in `$steps`);
 * - an identifier → `{ [name]: result }`;
 * - otherwise a JSONata expression seeing the globals as `$` and the result as `$result`, which
 *   must yield an object; a missing value yields `{}`.
 *
 * @throws EngineError `EXPRESSION_ERROR` naming the expression when it fails or yields a
 *   non-object.
 */
export async function applyOutput(
  output: string | undefined,
  result: unknown,
  scope: ExpressionScope,
  opts: EvaluateOptions = {},
): Promise<Record<string, unknown>> {
  if (output === undefined) return {};
  if (isIdentifier(output)) return { [output]: result };
  const value = await evaluateExpression(output, { ...scope, result }, opts);
  if (value === undefined) return {};
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new EngineError(
      'EXPRESSION_ERROR',
      `output ${quote(output)} must yield an object to merge into the variables, got ${describeValue(value)}`,
      { details: { expression: output } },
    );
  }
  return value as Record<string, unknown>;
}

/**
 * What a node receives as its input (DESIGN.md "Scopes").
 *
 * No `input` → a shallow copy of the globals; otherwise the expression's value.
 *
 * @throws EngineError `EXPRESSION_ERROR` from {@link evaluateExpression}.
 */
export async function applyInput(
  input: string | undefined,
  scope: ExpressionScope,
  opts: EvaluateOptions = {},
): Promise<unknown> {
  if (input === undefined) return { ...scope.variables };
  return evaluateExpression(input, scope, opts);
}
