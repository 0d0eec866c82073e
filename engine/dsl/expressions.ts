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
  /** Wall-clock budget of one evaluation, in ms. Default {@link DEFAULT_EXPRESSION_TIMEOUT_MS}. */
  timeoutMs?: number;
}

/** Default wall-clock budget of one evaluation, in ms. */
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
type Compiled =
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
 * Compiles `src` once per (source, time limit).
 *
 * The limits go to jsonata's own guardrails (jsonata 2.2 `timeout`/`stack`/`sequence` options,
 * checked on every AST step), per compiled expression and per evaluation. Regexes go to RE2
 * through jsonata's `RegexEngine` option. The `__evaluate_entry` hook bound with `expr.assign`
 * finds each evaluation's own turn token in its bindings, so it stays correct when one cached
 * expression is evaluated by several instances at once.
 */
function compile(src: string, timeoutMs: number): Compiled {
  const key = `${timeoutMs}\u0000${src}`;
  const hit = cache.get(key);
  if (hit) {
    // Re-insert so the Map's insertion order approximates least-recently-used.
    cache.delete(key);
    cache.set(key, hit);
    return hit;
  }
  let compiled: Compiled;
  try {
    const expr = jsonata(src, {
      timeout: timeoutMs,
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
  cache.set(key, compiled);
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
function quote(src: string): string {
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
  const compiled = compile(src, DEFAULT_EXPRESSION_TIMEOUT_MS);
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
function parses(src: string): boolean {
  return compile(src, DEFAULT_EXPRESSION_TIMEOUT_MS).ok;
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
  const compiled = compile(src, timeoutMs);
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
  const turn = newTurnToken();
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

/** One piece of a config string: literal text or a `{{ … }}` expression. */
export type TemplatePart = { kind: 'text'; text: string } | { kind: 'expr'; src: string; start: number };

/**
 * Splits a string into literal text and `{{ … }}` expressions.
 *
 * A template ends at the first `}}` after which its inside parses, so object constructors such as
 * `{{ {"a": {"b": 1}} }}` work; when no candidate parses, the first `}}` ends it (and evaluation
 * reports the parse error). An unclosed `{{` is literal text. `start` is the offset of `{{`.
 */
export function splitTemplate(s: string): TemplatePart[] {
  const parts: TemplatePart[] = [];
  let pos = 0;
  while (pos < s.length) {
    const open = s.indexOf('{{', pos);
    if (open < 0) break;
    const firstClose = s.indexOf('}}', open + 2);
    if (firstClose < 0) break;
    let close = firstClose;
    // Bounded, so a long string of stray braces cannot cost many parses.
    for (let c = firstClose, tries = 0; c >= 0 && tries < 16; c = s.indexOf('}}', c + 1), tries++) {
      if (parses(s.slice(open + 2, c))) {
        close = c;
        break;
      }
    }
    if (open > pos) parts.push({ kind: 'text', text: s.slice(pos, open) });
    parts.push({ kind: 'expr', src: s.slice(open + 2, close), start: open });
    pos = close + 2;
  }
  if (pos < s.length) parts.push({ kind: 'text', text: s.slice(pos) });
  return parts;
}

/** Whether `s` contains at least one `{{ … }}` template. */
export function hasTemplate(s: string): boolean {
  return splitTemplate(s).some((part) => part.kind === 'expr');
}

/**
 * Renders `{{ … }}` templates in every string of a JSON-like value.
 *
 * Walks objects and arrays and returns a new structure (the input is never mutated). A string
 * that is exactly one template (nothing around it) takes the expression's value with its type
 * (number, object, …); otherwise each template is stringified into the text (strings as is,
 * objects and arrays as JSON, `null` as `null`). Values are not URL-encoded: wrap path and query
 * parts in `$encodeUrlComponent(…)`.
 *
 * A template never renders a missing value silently (a request to `/devices//` or a message
 * with a hole): it fails when it reads a missing variable (found as {@link evaluateWhen} finds
 * them) unless it tests presence with `$exists(…)` and still yields a value, and a template inside
 * text fails when it yields no value.
 *
 * @throws EngineError `EXPRESSION_ERROR` (not retryable) naming the template, where it is in the
 *   value (`config.url`) and the missing variable(s); or from {@link evaluateExpression}.
 */
export async function renderTemplates(value: unknown, scope: ExpressionScope): Promise<unknown> {
  return renderAt(value, scope, []);
}

async function renderAt(value: unknown, scope: ExpressionScope, path: (string | number)[]): Promise<unknown> {
  if (typeof value === 'string') return renderString(value, scope, path);
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    for (const [i, item] of value.entries()) out.push(await renderAt(item, scope, [...path, i]));
    return out;
  }
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) out[key] = await renderAt(item, scope, [...path, key]);
    return out;
  }
  return value;
}

/** `config.url`, `config.body.items[0]`: where a template sits, as messages name it. */
function templatePath(path: readonly (string | number)[]): string {
  let out = 'config';
  for (const key of path) out += typeof key === 'number' ? `[${key}]` : `.${key}`;
  return out;
}

function templateError(src: string, path: readonly (string | number)[], problem: string, missing: string[] = []): EngineError {
  return new EngineError('EXPRESSION_ERROR', `template {{${src}}} in ${templatePath(path)} ${problem}`, {
    retryable: false,
    details: { expression: src, path: templatePath(path), ...(missing.length > 0 && { missing }) },
  });
}

/** One template's value; `embedded` when text surrounds it (then it must yield a value). */
async function renderPart(
  src: string,
  scope: ExpressionScope,
  path: readonly (string | number)[],
  embedded: boolean,
): Promise<unknown> {
  const refs = references(src);
  const missing = missingNames(refs, scope);
  const guarded = refs.some((ref) => ref.presenceOnly);
  const hint = ' (test optional variables with $exists(…), e.g. {{ $exists(x) ? x : "none" }})';
  if (missing.length > 0 && !guarded) throw templateError(src, path, `${describeMissing(missing)}${hint}`, missing);
  const value = await evaluateExpression(src, scope);
  if (value === undefined && missing.length > 0) {
    throw templateError(src, path, `${describeMissing(missing)}${hint}`, missing);
  }
  if (value === undefined && embedded) {
    throw templateError(src, path, `yields no value, which would leave a hole in the text${hint}`);
  }
  return value;
}

async function renderString(s: string, scope: ExpressionScope, path: readonly (string | number)[]): Promise<unknown> {
  const parts = splitTemplate(s);
  const only = parts[0];
  if (parts.length === 1 && only?.kind === 'expr') return renderPart(only.src, scope, path, false);
  if (!parts.some((part) => part.kind === 'expr')) return s;
  let out = '';
  for (const part of parts) {
    out += part.kind === 'text' ? part.text : stringify(await renderPart(part.src, scope, path, true));
  }
  return out;
}

function stringify(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value !== null && typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/** A variable an expression reads, and whether it only tests presence (`$exists(x)`). */
interface Reference {
  name: string;
  presenceOnly: boolean;
}

/** The parts of a JSONata AST node this walker reads; jsonata's own typing omits most of them. */
interface AstNode {
  type: string;
  value?: unknown;
  steps?: AstNode[];
  stages?: AstNode[];
  predicate?: AstNode[];
  expr?: AstNode;
  [key: string]: unknown;
}

function isAstNode(v: unknown): v is AstNode {
  return typeof v === 'object' && v !== null && typeof (v as { type?: unknown }).type === 'string';
}

/** Every AST node below `v` (arrays and `[key, value]` pairs of object constructors included). */
function childNodes(v: unknown): AstNode[] {
  if (isAstNode(v)) return [v];
  if (Array.isArray(v)) return v.flatMap(childNodes);
  return [];
}

/**
 * Collects the globals an expression reads.
 *
 * `root` says whether the node is evaluated against the globals (`$`): top level, operands,
 * arguments, object and array constructors, lambda bodies (JSONata evaluates them against the
 * input where they were defined). The first step of a path read at root is a global; later steps,
 * filters, sort terms and group-by are relative to the path and are not. `$$` is the root
 * everywhere.
 */
function collect(node: AstNode, root: boolean, presenceOnly: boolean, out: Reference[]): void {
  const add = (name: string): void => {
    out.push({ name, presenceOnly });
  };
  const relative = (v: unknown): void => {
    for (const child of childNodes(v)) collect(child, false, presenceOnly, out);
  };
  const same = (v: unknown): void => {
    for (const child of childNodes(v)) collect(child, root, presenceOnly, out);
  };

  switch (node.type) {
    case 'path': {
      const steps = node.steps ?? [];
      steps.forEach((step, i) => {
        const prev = steps[i - 1];
        // `$.x` at root and `$$.x` anywhere name a global.
        const afterRoot =
          i === 1 && prev?.type === 'variable' && ((prev.value === '' && root) || prev.value === '$');
        collect(step, i === 0 ? root : afterRoot, presenceOnly, out);
      });
      const first = steps[0];
      const second = steps[1];
      // `$steps.check`; with `$steps["check"].ok` the variable's own filter named the step.
      const plainSteps =
        first?.type === 'variable' && first.value === 'steps' && first.predicate === undefined;
      if (plainSteps && second?.type === 'name') {
        if (typeof second.value === 'string') add(`$steps.${second.value}`);
      }
      relative(node.group);
      return;
    }
    case 'name':
      if (root && typeof node.value === 'string') add(node.value);
      relative(node.stages);
      relative(node.predicate);
      relative(node.group);
      return;
    case 'variable': {
      if (typeof node.value === 'string') {
        // `$steps["check"]`: the step name is a string filter right on the variable.
        const filter = node.predicate?.[0]?.expr;
        if (node.value === 'steps' && filter?.type === 'string' && typeof filter.value === 'string') {
          add(`$steps.${filter.value}`);
        } else if (node.value === 'result' || node.value === 'error') {
          // `$steps`, `$result` and `$error` are the only bindings besides `$`; others are local.
          add(`$${node.value}`);
        }
      }
      relative(node.stages);
      relative(node.predicate);
      return;
    }
    case 'function':
    case 'partial': {
      const procedure = node['procedure'];
      const isExists = isAstNode(procedure) && procedure.type === 'variable' && procedure.value === 'exists';
      for (const arg of childNodes(node['arguments'])) collect(arg, root, presenceOnly || isExists, out);
      if (isAstNode(procedure)) collect(procedure, root, presenceOnly, out);
      relative(node.stages);
      relative(node.predicate);
      return;
    }
    case 'lambda':
      same(node['body']);
      return;
    case 'sort':
      relative(node['terms']);
      return;
    case 'transform':
      relative(node['pattern']);
      relative(node['update']);
      relative(node['delete']);
      return;
    case 'filter':
      relative(node.expr);
      return;
    default:
      // binary, unary (incl. object and array constructors), condition, block, bind, apply, …:
      // their operands are evaluated where the node is, except the usual relative parts.
      for (const [key, value] of Object.entries(node)) {
        if (key === 'stages' || key === 'predicate' || key === 'group') relative(value);
        else if (key !== 'type' && key !== 'value') same(value);
      }
  }
}

function references(src: string): Reference[] {
  const compiled = compile(src, DEFAULT_EXPRESSION_TIMEOUT_MS);
  if (!compiled.ok) return [];
  const out: Reference[] = [];
  collect(compiled.expr.ast() as unknown as AstNode, true, false, out);
  return out;
}

/**
 * The globals and step results an expression reads, found statically in its AST.
 *
 * Returns unique names in order of appearance: a global as its name (`device`), a step result as
 * `$steps.<nodeId>`, and `$result` / `$error` when used. Names inside filters and later path steps
 * are relative and not listed. An expression that does not parse reads nothing.
 */
export function referencedVariables(src: string): string[] {
  return [...new Set(references(src).map((ref) => ref.name))];
}

/** Whether a name from {@link referencedVariables} is absent from the scope. */
function isMissing(name: string, scope: ExpressionScope): boolean {
  if (name === '$result') return scope.result === undefined;
  if (name === '$error') return scope.error === undefined;
  if (name.startsWith('$steps.')) {
    const step = name.slice('$steps.'.length);
    return scope.steps === undefined || !Object.hasOwn(scope.steps, step) || scope.steps[step] === undefined;
  }
  return !Object.hasOwn(scope.variables, name) || scope.variables[name] === undefined;
}

/** The names among `refs` that are read (not only tested with `$exists`) and absent from `scope`. */
function missingNames(refs: readonly Reference[], scope: ExpressionScope): string[] {
  return [...new Set(refs.filter((ref) => !ref.presenceOnly && isMissing(ref.name, scope)).map((ref) => ref.name))];
}

function describeMissing(names: string[]): string {
  const listed = names.map((name) => JSON.stringify(name)).join(', ');
  return names.length === 1 ? `reads missing variable ${listed}` : `reads missing variables ${listed}`;
}

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
