/**
 * The evaluation core of the DSL's expressions (expressions.ts is the entry): compiling JSONata
 * once per source with its guardrails, checking that an expression parses and can run, and
 * evaluating one against a scope into plain JSON data.
 *
 * jsonata's own limits (`timeout`, `stack`, `sequence`) are set here; regexes run on RE2
 * (regex.ts); signatures are guarded (expression-guards.ts); evaluations take turns
 * (expression-turns.ts).
 *
 * Shared with the renderer: imports nothing from Node.
 */
import jsonata from 'jsonata';
import { EngineError } from '../errors';
import { expressionProblems, guardSignature, type ExpressionProblem } from './expression-guards';
import { endTurns, newTurnToken, turnBeforeStep, TURN_BINDING } from './expression-turns';
import { LinearRegExp } from './regex';

/** What an expression can see. */
export interface ExpressionScope {
  /** The instance's global variables: the JSONata input `$`. */
  variables: Record<string, unknown>;
  /** Results of completed nodes by node id: `$steps`. */
  steps?: Record<string, unknown>;
  /** The node's own result: `$result` (in `output` mappings). */
  result?: unknown;
  /** The failure an error edge was taken for: `$error`. */
  error?: unknown;
}

/** Options of {@link evaluateExpression}. */
export interface EvaluateOptions {
  /**
   * Time limit of one evaluation, in ms: how long it may run, not counting time spent waiting for
   * its turn while other evaluations run (expression-turns.ts). Default {@link DEFAULT_EXPRESSION_TIMEOUT_MS}.
   */
  timeoutMs?: number;
}

/** Default time limit of one evaluation, in ms (its own running time: see {@link EvaluateOptions.timeoutMs}). */
export const DEFAULT_EXPRESSION_TIMEOUT_MS = 1000;

/**
 * Deepest AST recursion one evaluation may reach.
 *
 * JSONata evaluates asynchronously, so unbounded non-tail recursion never overflows the JS stack:
 * it grows the heap until the timeout. A depth cap makes it fail fast with a clear error. 1000
 * leaves room for honest recursion (a 150-deep factorial needs about 450).
 */
export const MAX_EXPRESSION_DEPTH = 1000;

/** Longest sequence one evaluation may build (e.g. `[1..n]`, `$map`), in items. */
export const MAX_EXPRESSION_SEQUENCE = 1_000_000;

/** How many compiled expressions are kept; the oldest is dropped past this. */
const CACHE_LIMIT = 5000;

/**
 * A compiled expression: `unsupported` lists its parts that cannot run (regexes RE2 refuses,
 * signatures jsonata would check by backtracking); it parses all the same, so templates still end
 * where its syntax says.
 */
export type Compiled =
  | { ok: true; expr: jsonata.Expression; unsupported: ExpressionProblem[] }
  | { ok: false; message: string; position?: number };

/** jsonata's hook before each AST step; a symbol, so no expression can name it. */
const EVALUATE_ENTRY = Symbol.for('jsonata.__evaluate_entry');

/**
 * Before every AST step of every evaluation (`$eval`'d code included): refuse a signature no
 * static check saw, then wait for this evaluation's turn (expression-turns.ts).
 */
function beforeStep(expr: unknown, _input: unknown, environment: unknown): Promise<void> | undefined {
  guardSignature(expr);
  return turnBeforeStep(environment);
}

const cache = new Map<string, Compiled>();

/**
 * Compiles `src` once per source.
 *
 * The depth and sequence limits go to jsonata's own guardrails (jsonata 2.2 `stack`/`sequence`
 * options, checked on every AST step); the time limit is each evaluation's turn token's
 * (expression-turns.ts), checked from the same hook as its turns. Regexes go to RE2
 * through jsonata's `RegexEngine` option. The `__evaluate_entry` hook bound with `expr.assign`
 * finds each evaluation's own turn token in its bindings, so it stays correct when one cached
 * expression is evaluated by several instances at once.
 */
export function compile(src: string): Compiled {
  const hit = cache.get(src);
  if (hit) {
    // Re-insert so the Map's insertion order approximates least-recently-used.
    cache.delete(src);
    cache.set(src, hit);
    return hit;
  }
  let compiled: Compiled;
  try {
    const expr = jsonata(src, {
      // No `timeout`: jsonata's is wall-clock from the evaluation's start, and evaluations take
      // turns; the time limit counts each one's own turns (expression-turns.ts).
      stack: MAX_EXPRESSION_DEPTH,
      sequence: MAX_EXPRESSION_SEQUENCE,
      // jsonata calls `new RegexEngine(literal)`, then `lastIndex` and `exec`: LinearRegExp has them.
      RegexEngine: LinearRegExp as unknown as RegExpConstructor,
    });
    // jsonata types `assign` by string name; it binds any key, and looks the hook up by this symbol.
    expr.assign(EVALUATE_ENTRY as unknown as string, beforeStep);
    compiled = { ok: true, expr, unsupported: expressionProblems(expr.ast()) };
  } catch (err) {
    const { message, position } = describeJsonataError(err);
    compiled = position === undefined ? { ok: false, message } : { ok: false, message, position };
  }
  cache.set(src, compiled);
  if (cache.size > CACHE_LIMIT) {
    const oldest = cache.keys().next();
    if (!oldest.done) cache.delete(oldest.value);
  }
  return compiled;
}

/**
 * JSONata throws plain objects `{ code, message, position, token }`, not Errors. An error inside
 * `$eval`'d code (D3120 parse, D3121 evaluation) carries the inner one as `error`, whose message
 * is given as is (jsonata's own message quotes it as JSON).
 */
function describeJsonataError(err: unknown): { message: string; position?: number; code?: string } {
  if (typeof err === 'object' && err !== null) {
    const e = err as { message?: unknown; position?: unknown; code?: unknown; error?: unknown };
    const inner = (e.code === 'D3120' || e.code === 'D3121') && typeof e.error === 'object' && e.error !== null
      ? (e.error as { message?: unknown }).message
      : undefined;
    const message =
      typeof inner === 'string' && inner !== ''
        ? `in $eval: ${inner}`
        : typeof e.message === 'string' && e.message !== ''
          ? e.message
          : String(err);
    const out: { message: string; position?: number; code?: string } = { message };
    if (typeof e.position === 'number') out.position = e.position;
    if (typeof e.code === 'string') out.code = e.code;
    return out;
  }
  return { message: String(err) };
}

/**
 * An expression as messages show it: in backticks (JSONata uses double quotes itself, which
 * JSON-quoting would escape), on one line, shortened past 120 characters.
 */
export function quote(src: string): string {
  const oneLine = src.replace(/\s+/gu, ' ').trim();
  return `\`${oneLine.length > 120 ? `${oneLine.slice(0, 117)}...` : oneLine}\``;
}

/** The outcome of {@link parseExpression}. */
export type ParsedExpression =
  | { ok: true }
  | {
      ok: false;
      /** One line: jsonata's syntax error, or what cannot run and why. */
      message: string;
      /** 1-based character offset, when known. */
      position?: number;
      /**
       * Set when the expression parses but has a part that cannot run: a regex literal RE2 does
       * not support (backreference, lookaround, …) or a refused function signature.
       */
      unsupported?: true;
    };

/**
 * Checks that `src` is a valid JSONata expression that can run.
 *
 * Never throws. `position` is the 1-based character offset JSONata reports, when it has one.
 * An expression whose regex literal RE2 cannot run (e.g. `/(a)\1/`, `/(?=a)/`) or whose function
 * signature is refused is not ok either, with `unsupported: true` and a message naming the
 * construct. Compiled expressions are cached (bounded), so validating then evaluating parses once.
 */
export function parseExpression(src: string): ParsedExpression {
  const compiled = compile(src);
  if (compiled.ok) {
    const first = compiled.unsupported[0];
    if (first === undefined) return { ok: true };
    return first.position === undefined
      ? { ok: false, message: first.message, unsupported: true }
      : { ok: false, message: first.message, position: first.position, unsupported: true };
  }
  return compiled.position === undefined
    ? { ok: false, message: compiled.message }
    : { ok: false, message: compiled.message, position: compiled.position };
}

/** Whether `src` is JSONata syntax (whether or not every part can run). */
export function parses(src: string): boolean {
  return compile(src).ok;
}

/**
 * Evaluates one JSONata expression against a scope.
 *
 * `$` is `scope.variables`; `$steps`, `$result`, `$error` are bound from the scope. The value is
 * returned as plain JSON data (JSONata's internal sequences become ordinary arrays) and never
 * aliases the scope's objects.
 *
 * Regexes run on RE2 (linear time). The time limit is checked before every AST step, and
 * evaluations take turns of at most 5 ms with the host's other work between any two
 * (expression-turns.ts); one built-in call on a large value (`$string`, `$split`, `$pad` with a
 * huge width, a regex over a long string) runs to its end before the next check.
 *
 * @throws EngineError `EXPRESSION_ERROR` (not retryable) naming the expression, when it does not
 *   parse, has a regex RE2 cannot run or a refused signature, fails, runs past `timeoutMs`
 *   (default 1000 ms), recurses deeper than {@link MAX_EXPRESSION_DEPTH}, or yields a function.
 */
export async function evaluateExpression(
  src: string,
  scope: ExpressionScope,
  opts: EvaluateOptions = {},
): Promise<unknown> {
  const timeoutMs = Math.max(1, Math.floor(opts.timeoutMs ?? DEFAULT_EXPRESSION_TIMEOUT_MS));
  const compiled = compile(src);
  if (!compiled.ok) {
    throw new EngineError(
      'EXPRESSION_ERROR',
      `expression ${quote(src)} does not parse: ${compiled.message}`,
      {
        details: { expression: src, position: compiled.position },
      },
    );
  }
  const unsupported = compiled.unsupported[0];
  if (unsupported !== undefined) {
    throw new EngineError('EXPRESSION_ERROR', `expression ${quote(src)} cannot run: ${unsupported.message}`, {
      details: { expression: src, position: unsupported.position },
    });
  }
  let value: unknown;
  const turn = newTurnToken(timeoutMs);
  try {
    value = await compiled.expr.evaluate(scope.variables, {
      steps: scope.steps ?? {},
      result: scope.result,
      error: scope.error,
      [TURN_BINDING]: turn,
    });
  } catch (err) {
    const { message, position, code } = describeJsonataError(err);
    throw new EngineError('EXPRESSION_ERROR', `expression ${quote(src)} failed: ${message}`, {
      details: { expression: src, position, jsonataCode: code },
      cause: err,
    });
  } finally {
    endTurns(turn);
  }
  return toPlain(value, src);
}

/** Copies a JSONata value into plain JSON data (sequences carry extra flags; lambdas are not data). */
function toPlain(value: unknown, src: string): unknown {
  if (value === null || typeof value !== 'object') {
    if (typeof value === 'function') throw yieldedFunction(src);
    return value;
  }
  if (Array.isArray(value)) return value.map((item) => toPlain(item, src));
  const record = value as Record<string, unknown>;
  if (record['_jsonata_lambda'] === true || record['_jsonata_function'] === true) throw yieldedFunction(src);
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(record)) {
    if (item !== undefined) out[key] = toPlain(item, src);
  }
  return out;
}

function yieldedFunction(src: string): EngineError {
  return new EngineError(
    'EXPRESSION_ERROR',
    `expression ${quote(src)} yielded a function, which is not data`,
    {
      details: { expression: src },
    },
  );
}
