/**
 * The `script` node type's config: its limits, its schema and its syntax check, apart from the
 * sandbox and the thread pool so that code without Node (the designer in a browser page) can
 * check a script's config exactly as the engine's validation does.
 *
 * Pure: imports acorn and zod only.
 */
import { parse as parseJs, tokenizer } from 'acorn';
import { z } from 'zod';

const MIB = 1024 * 1024;

/** Limits of the `script` node type: times in ms, sizes in bytes. */
export const SCRIPT_LIMITS = {
  defaultTimeLimitMs: 1000,
  /**
   * A script runs on a pool thread, so a long one holds no heartbeat, no loop and no other
   * instance: the bound is one day, as for a compensation's `timeoutMs`.
   */
  maxTimeLimitMs: 86_400_000,
  defaultMemoryLimitBytes: 32 * MIB,
  minMemoryLimitBytes: 1 * MIB,
  maxMemoryLimitBytes: 256 * MIB,
  /** Longest `code`, in characters. */
  maxCodeLength: 1_000_000,
  /**
   * QuickJS stack limit. QuickJS checks it on its own (linear-memory) stack, but every
   * interpreted frame also uses V8's native stack; above ~256 KiB plain recursion overflows V8
   * first (measured with quickjs-emscripten 0.32 on Node 20), which is a host crash rather than a
   * catchable "stack overflow" in the script. 256 KiB still allows ~1,500 nested calls.
   */
  maxStackSizeBytes: 256 * 1024,
  /** `console.*` calls forwarded to `ctx.log` per execution; the rest are dropped. */
  maxLogLines: 100,
  /** Longest forwarded log message, in characters. */
  maxLogChars: 2000,
} as const;

/** How the sandbox wraps a script's code; the prefix shares line 1 with it. */
export const WRAP_PREFIX = '(function (input, variables, steps) {';

/**
 * Config of `script`.
 *
 * - `code`: a function body that sees `input`, `variables` and `steps` and returns the result,
 *   e.g. `return input.a + 1`; strict mode; not a template;
 * - `timeLimitMs`: 1 … 86,400,000 (one day; default 1,000) of wall-clock time, inside the
 *   script's thread; the node's `timeoutMs` cuts it earlier;
 * - `memoryLimitBytes`: 1 MiB … 256 MiB (default 32 MiB) for the whole QuickJS runtime,
 *   inputs included; enforced by capping the sandbox's WebAssembly memory, so it bounds the host
 *   process too (give or take one 64 KiB page and the allocator's overhead).
 */
export const ScriptConfigSchema = z.strictObject({
  code: z
    .string()
    .min(1, 'code is empty')
    .max(SCRIPT_LIMITS.maxCodeLength)
    .describe('JavaScript function body; sees input, variables, steps; return the result'),
  timeLimitMs: z
    .number()
    .int()
    .min(1)
    .max(SCRIPT_LIMITS.maxTimeLimitMs)
    .default(SCRIPT_LIMITS.defaultTimeLimitMs)
    .describe('Wall-clock time limit in ms, 1 to 86400000 (one day); the node timeoutMs cuts it earlier'),
  memoryLimitBytes: z
    .number()
    .int()
    .min(SCRIPT_LIMITS.minMemoryLimitBytes)
    .max(SCRIPT_LIMITS.maxMemoryLimitBytes)
    .default(SCRIPT_LIMITS.defaultMemoryLimitBytes)
    .describe('Memory limit in bytes'),
});

/** Parsed config of `script`. */
export type ScriptConfig = z.output<typeof ScriptConfigSchema>;

/** How the sandbox wraps a script's code: {@link WRAP_PREFIX}, the code, a line break and `})`. */
export function wrapScript(code: string): string {
  return `${WRAP_PREFIX}${code}\n})`;
}

/** A place in a script's own code (not the wrapper around it): 1-based line and column. */
export interface ScriptLocation {
  line: number;
  column: number;
  /** The place is past the code's end: in what the wrapper adds after it (an unclosed bracket, string or expression). */
  atEnd?: true;
}

/** The line breaks acorn and JavaScript count (QuickJS counts `\n` only, which the others contain). */
const LINE_BREAK = /\r\n?|\n|\u2028|\u2029/u;

/**
 * Where a 1-based line and column of the wrapped source ({@link wrapScript}) are in `code`
 * itself: line 1 loses the prefix's width; a place in the wrapper's closing line is the code's end
 * (`atEnd`, at the column after its last character).
 */
export function scriptLocation(code: string, wrappedLine: number, wrappedColumn: number): ScriptLocation {
  const lines = code.split(LINE_BREAK);
  if (wrappedLine > lines.length) {
    const last = lines[lines.length - 1] ?? '';
    return { line: lines.length, column: last.length + 1, atEnd: true };
  }
  const line = Math.max(1, wrappedLine);
  const column = line === 1 ? wrappedColumn - WRAP_PREFIX.length : wrappedColumn;
  return { line, column: Math.max(1, column) };
}

/** The message of a syntax error past the code's end (the wrapper's `}` is not the user's). */
export const ENDS_EARLY = 'the code ends too early (an unclosed bracket, string or expression)';

/** A script's syntax error: where it is in the code (see {@link ScriptLocation}) and why. */
export interface ScriptSyntaxError extends ScriptLocation {
  message: string;
}

/**
 * The first syntax error of a script's code, placed in the code itself, or undefined when it
 * parses as a function body. The designer's script field shows it as the user types; the
 * engine's validation reports it through {@link scriptSyntaxProblems}.
 *
 * Parsed with acorn (plain JavaScript, nothing runs, the designer's own check), wrapped exactly as
 * the sandbox compiles it. Not QuickJS: validation must give the same answer whether or not a
 * sandbox module happens to be loaded, and QuickJS's parser can overflow the host stack on absurd
 * nesting. What acorn accepts but QuickJS does not is still reported when the script runs, at the
 * same kind of place (script-sandbox.ts).
 */
export function scriptSyntaxError(code: string): ScriptSyntaxError | undefined {
  const source = wrapScript(code);
  type Span = { type: string; start: number; end: number };
  let program: { body: Array<Span & { expression?: Span }> };
  try {
    program = parseJs(source, { ecmaVersion: 'latest', sourceType: 'script' }) as unknown as typeof program;
  } catch (error) {
    if (!(error instanceof SyntaxError)) return undefined; // e.g. the host's stack on absurd nesting
    const e = error as SyntaxError & { pos?: number; loc?: { line: number; column: number } };
    const past = e.pos !== undefined && e.pos >= WRAP_PREFIX.length + code.length;
    // acorn's columns are 0-based.
    const at = scriptLocation(code, past ? Number.MAX_SAFE_INTEGER : (e.loc?.line ?? 1), (e.loc?.column ?? 0) + 1);
    if (at.atEnd) return { ...at, message: ENDS_EARLY };
    return { ...at, message: e.message.replace(/\s*\(\d+:\d+\)$/u, '') };
  }
  // One statement: the parenthesised function, from the first "(" to the last ")".
  const fn = program.body.length === 1 ? program.body[0]?.expression : undefined;
  if (fn?.type !== 'FunctionExpression' || fn.start !== 1 || fn.end !== source.length - 1) {
    const closing = closingAt(code, source);
    return { ...closing, message: 'the code closes its function early (a "}" with no "{" of its own)' };
  }
  return undefined;
}

/**
 * Where the `}` that closes the wrapper's function inside the code is (tokens read by acorn, so
 * braces in strings, comments and templates do not count), or line 1, column 1 when none is found.
 */
function closingAt(code: string, source: string): ScriptLocation {
  let depth = 0;
  try {
    for (const token of tokenizer(source, { ecmaVersion: 'latest', locations: true })) {
      const label = token.type.label;
      if (label === '{' || label === '${' || label === '#{') depth += 1;
      else if (label === '}') {
        depth -= 1;
        if (depth === 0 && token.loc) return scriptLocation(code, token.loc.start.line, token.loc.start.column + 1);
      }
    }
  } catch {
    // The code parsed, so its tokens read; a surprise here only loses the place.
  }
  return { line: 1, column: 1 };
}

/**
 * The syntax errors of a script's code, as `validateConfig` reports them: `code has a syntax
 * error at line L, column C: …` (line and column in the code itself), or that it ends too early,
 * or that it closes its function early. See {@link scriptSyntaxError}.
 */
export function scriptSyntaxProblems(code: string): string[] {
  const found = scriptSyntaxError(code);
  if (found === undefined) return [];
  return [`code has a syntax error at line ${found.line}, column ${found.column}: ${found.message}`];
}
