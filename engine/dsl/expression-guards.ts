/**
 * What keeps one JSONata evaluation from stalling its thread (issue 17), beside jsonata's own
 * guardrails (`timeout`, `stack`, `sequence`, set in expression-core.ts):
 *
 * - regex literals run on RE2 (regex.ts), so matching is linear; the ones RE2 cannot run are
 *   found before evaluation ({@link expressionProblems});
 * - function signatures (`function($a, $b)<s+n?:s>{…}`) are limited, since jsonata checks the
 *   arguments of a call against a backtracking `RegExp` it builds from the signature: `s+s+s+…`
 *   took 2.4 s on a call with 40 arguments.
 *
 * Time slicing (the host's other work runs between slices) is expression-turns.ts.
 *
 * Pure (no Node), shared with the renderer.
 */
import { regexProblem } from './regex';

/** An expression part that cannot run, found before evaluation. */
export interface ExpressionProblem {
  /** One line naming the part and why, e.g. ``regular expression /(a)\1/ uses a backreference `\1`, …``. */
  message: string;
  /** jsonata's 1-based character position of the part, when it has one. */
  position?: number;
}

/** The AST fields these checks read; jsonata's typing omits most of them. */
interface Node {
  type?: unknown;
  value?: unknown;
  position?: unknown;
  signature?: { definition?: unknown };
}

/** Most parameters of one signature that may be optional (`?`, `-`) or repeated (`+`). */
export const MAX_SIGNATURE_VARIABLE_PARAMS = 8;

/** The type letters a signature choice `(…)` may list. */
const TYPE_LETTERS = new Set(['a', 'b', 'f', 'j', 'l', 'n', 'o', 's', 'x']);

/**
 * Why a lambda's signature (`<s+n?:s>`) is refused, or undefined.
 *
 * jsonata turns the parameter list into `^([sm]+)([nm]?)…$` and tests the types of each call's
 * arguments with it: backtracking, so each parameter marked `+`, `?` or `-` multiplies the work
 * for a call with many arguments. Allowed: at most one `+` and at most
 * {@link MAX_SIGNATURE_VARIABLE_PARAMS} marked parameters in all (one `+` costs O(arguments),
 * each `?` at most doubles it). A choice `(…)` may list only type letters: jsonata copies it
 * into the `RegExp` as written.
 */
export function signatureProblem(definition: string): string | undefined {
  const end = definition.indexOf(':');
  const params = definition.slice(1, end < 0 ? definition.length - 1 : end);
  let plus = 0;
  let marked = 0;
  for (let i = 0; i < params.length; i++) {
    const c = params[i];
    if (c === '+') {
      plus++;
      marked++;
    } else if (c === '?' || c === '-') {
      marked++;
    } else if (c === '<') {
      i = closing(params, i, '<', '>');
    } else if (c === '(') {
      const close = closing(params, i, '(', ')');
      const choice = params.slice(i + 1, close);
      if (![...choice].every((letter) => TYPE_LETTERS.has(letter))) {
        return `function signature ${definition} lists ${JSON.stringify(choice)} in a choice; a choice (…) may list only the type letters ${[...TYPE_LETTERS].join('')}`;
      }
      i = close;
    }
  }
  if (plus > 1) {
    return `function signature ${definition} marks ${plus} parameters with "+"; at most one may be (jsonata checks arguments with a backtracking pattern)`;
  }
  if (marked > MAX_SIGNATURE_VARIABLE_PARAMS) {
    return `function signature ${definition} marks ${marked} parameters optional or repeated; at most ${MAX_SIGNATURE_VARIABLE_PARAMS} may be (jsonata checks arguments with a backtracking pattern)`;
  }
  return undefined;
}

/** Index of the bracket closing the one at `start` (jsonata's own balancing), or the end. */
function closing(s: string, start: number, open: string, close: string): number {
  let depth = 1;
  for (let i = start + 1; i < s.length; i++) {
    if (s[i] === close && --depth === 0) return i;
    if (s[i] === open) depth++;
  }
  return s.length;
}

function problemOf(node: Node): ExpressionProblem | undefined {
  const position = typeof node.position === 'number' ? node.position : undefined;
  let message: string | undefined;
  if (node.type === 'regex' && node.value instanceof RegExp) {
    const reason = regexProblem(node.value.source, node.value.flags);
    if (reason !== undefined) message = `regular expression /${node.value.source}/ ${reason}`;
  } else if (node.type === 'lambda' && typeof node.signature?.definition === 'string') {
    message = signatureProblem(node.signature.definition);
  }
  if (message === undefined) return undefined;
  return position === undefined ? { message } : { message, position };
}

/**
 * The regex literals and function signatures of a parsed expression that cannot run, in source
 * order of discovery. Walks the AST without recursion, so a deep one cannot overflow the stack.
 */
export function expressionProblems(ast: unknown): ExpressionProblem[] {
  const out: ExpressionProblem[] = [];
  const stack: unknown[] = [ast];
  const seen = new Set<object>();
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v !== 'object' || v === null || v instanceof RegExp || seen.has(v)) continue;
    seen.add(v);
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push(v[i]);
      continue;
    }
    const node = v as Node;
    const found = problemOf(node);
    if (found) out.push(found);
    for (const [key, child] of Object.entries(node)) {
      if (key !== 'signature' && key !== 'value') stack.push(child);
    }
  }
  return out;
}

/**
 * Refuses, while evaluating, a lambda whose signature {@link signatureProblem} refuses: `$eval`
 * builds lambdas that no static check saw. Called from jsonata's `__evaluate_entry` hook.
 *
 * @throws Error with `code: 'RUNNEL_SIGNATURE'` and jsonata's `position`.
 */
export function guardSignature(expr: unknown): void {
  const node = expr as Node;
  if (node.type !== 'lambda' || typeof node.signature?.definition !== 'string') return;
  const why = signatureProblem(node.signature.definition);
  if (why !== undefined) throw Object.assign(new Error(why), { code: 'RUNNEL_SIGNATURE', position: node.position });
}
