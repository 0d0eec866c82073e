/**
 * Linear-time regular expressions for every pattern a user writes: JSONata regex literals
 * (`$match`, `$contains`, `$replace`, `$split`, …) and JSON Schema `pattern` /
 * `patternProperties` (issue 17: a backtracking engine took 61 s on `/(a+)+$/` and a 30-character
 * input, and froze the host with it).
 *
 * Patterns run on RE2JS, the JavaScript port of RE2: matching costs O(pattern × input), whatever
 * the pattern. It has RE2's syntax and semantics, which differ from JavaScript's in a few places:
 * no backreferences (`\1`, `\k<name>`) and no lookaround (`(?=`, `(?!`, `(?<=`, `(?<!`), which
 * are refused with a message naming the construct; `\s` is `[\t\n\f\r ]`, `\d`, `\w` and `\b`
 * are ASCII, `.` matches `\r` (only `\n` ends it), and repeat counts stop at 1000. JavaScript
 * escapes such as `\uXXXX`, `\cX` and named groups `(?<name>…)` are translated.
 *
 * Pure JavaScript (no Node, no WebAssembly), so the renderer runs the same engine.
 */
import { RE2JS, RE2JSException, RE2JSSyntaxException } from 're2js';

/** A construct RE2 cannot run, found in a pattern. */
export interface UnsupportedConstruct {
  /** What it is, e.g. `a backreference`, `a lookahead`. */
  construct: string;
  /** The construct as written, e.g. `\1`, `(?=`. */
  text: string;
}

/**
 * Finds backreferences and lookaround outside character classes, which RE2 refuses (with messages
 * that do not say what the construct is) or, for `\k<name>`, would silently read as literal text.
 */
function findUnsupported(source: string): UnsupportedConstruct | undefined {
  let inClass = false;
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c === '\\') {
      const next = source[i + 1] ?? '';
      if (!inClass && next >= '1' && next <= '9') {
        const digits = /^[0-9]+/u.exec(source.slice(i + 1))?.[0] ?? next;
        return { construct: 'a backreference', text: `\\${digits}` };
      }
      if (!inClass && next === 'k' && source[i + 2] === '<') {
        const close = source.indexOf('>', i + 3);
        return { construct: 'a named backreference', text: close < 0 ? '\\k<' : source.slice(i, close + 1) };
      }
      i++;
      continue;
    }
    if (inClass) {
      if (c === ']') inClass = false;
      continue;
    }
    if (c === '[') {
      inClass = true;
      // In JavaScript a `]` right after `[` or `[^` closes the class (`[]`, `[^]`).
      if (source[i + 1] === '^') i++;
      if (source[i + 1] === ']') {
        i++;
        inClass = false;
      }
      continue;
    }
    if (c === '(' && source[i + 1] === '?') {
      const two = source.slice(i + 2, i + 4);
      if (two.startsWith('=')) return { construct: 'a lookahead', text: '(?=' };
      if (two.startsWith('!')) return { construct: 'a negative lookahead', text: '(?!' };
      if (two === '<=') return { construct: 'a lookbehind', text: '(?<=' };
      if (two === '<!') return { construct: 'a negative lookbehind', text: '(?<!' };
    }
  }
  return undefined;
}

/** Why a pattern cannot run (see {@link regexProblem}). */
export class UnsupportedRegexError extends Error {
  override readonly name = 'UnsupportedRegexError';

  constructor(
    /** The pattern as written (its source, without slashes or flags). */
    readonly pattern: string,
    /** Why, e.g. "uses a backreference `\1`, which RE2 … does not support". */
    readonly reason: string,
  ) {
    super(`regular expression /${pattern}/ ${reason}`);
  }
}

const ENGINE = "RE2 (Runnel's linear-time regular expression engine)";

/** Compiled patterns by flags and source; the oldest is dropped past {@link CACHE_LIMIT}. */
const cache = new Map<string, RE2JS | UnsupportedRegexError>();
/**
 * Kept small: each compiled pattern keeps its DFA's states, up to 8 MiB (RE2JS's budget; ~5 MiB
 * measured after `(a|b)*a(a|b){20}$` over 1 MiB), while a compile costs only tens of µs.
 */
const CACHE_LIMIT = 100;

/**
 * Compiles `source` for RE2 with JavaScript flags (`i`, `m`, `s`; `g`, `y` and `u` do not change
 * what matches). Cached, since JSONata builds its regex object again each time a literal is
 * evaluated.
 *
 * @throws UnsupportedRegexError naming the construct RE2 cannot run, or RE2's own reason.
 */
export function compileLinear(source: string, flags = ''): RE2JS {
  const key = `${flags}/${source}`;
  let hit = cache.get(key);
  if (hit === undefined) {
    hit = compileUncached(source, flags);
    cache.set(key, hit);
    if (cache.size > CACHE_LIMIT) {
      const oldest = cache.keys().next();
      if (!oldest.done) cache.delete(oldest.value);
    }
  }
  if (hit instanceof UnsupportedRegexError) throw hit;
  return hit;
}

function compileUncached(source: string, flags: string): RE2JS | UnsupportedRegexError {
  const unsupported = findUnsupported(source);
  if (unsupported) {
    return new UnsupportedRegexError(
      source,
      `uses ${unsupported.construct} \`${unsupported.text}\`, which ${ENGINE} does not support`,
    );
  }
  let mask = 0;
  if (flags.includes('i')) mask |= RE2JS.CASE_INSENSITIVE;
  if (flags.includes('m')) mask |= RE2JS.MULTILINE;
  if (flags.includes('s')) mask |= RE2JS.DOTALL;
  try {
    return RE2JS.compile(RE2JS.translateRegExp(source), mask);
  } catch (err) {
    if (err instanceof RE2JSSyntaxException) {
      const at = err.getPattern();
      return new UnsupportedRegexError(
        source,
        `cannot run on ${ENGINE}: ${err.getDescription()}${at === null || at === '' ? '' : ` \`${at}\``}`,
      );
    }
    if (err instanceof RE2JSException) return new UnsupportedRegexError(source, `cannot run on ${ENGINE}: ${err.message}`);
    throw err;
  }
}

/**
 * Why `source` (with JavaScript `flags`) cannot run on RE2, or `undefined` when it can.
 *
 * Never throws. The reason names the construct: `uses a backreference \`\1\`, which RE2 (…)
 * does not support`.
 */
export function regexProblem(source: string, flags = ''): string | undefined {
  try {
    compileLinear(source, flags);
    return undefined;
  } catch (err) {
    if (err instanceof UnsupportedRegexError) return err.reason;
    throw err;
  }
}

/**
 * The part of `RegExp` that JSONata's evaluator uses, backed by RE2: pass the class as JSONata's
 * `RegexEngine` option (jsonata 2.x: `new RegexEngine(literal)`, then `lastIndex` and `exec`).
 *
 * `exec` follows `RegExp.prototype.exec`: with `g` or `y` it starts at `lastIndex` and moves it
 * past the match (to 0 on a miss); indices count UTF-16 code units; a group that took no part is
 * `undefined`. `y` (sticky) is read as `g`.
 *
 * @throws UnsupportedRegexError from the constructor, for a pattern RE2 cannot run.
 */
export class LinearRegExp {
  /** Where the next `exec` of a `g` pattern starts, in UTF-16 code units. */
  lastIndex = 0;
  readonly source: string;
  readonly flags: string;
  private readonly re: RE2JS;
  /** The matcher of the last input: jsonata calls `exec` on one string until its last match. */
  private last: { input: string; matcher: ReturnType<RE2JS['matcher']> } | undefined;

  constructor(pattern: RegExp | string, flags?: string) {
    this.source = typeof pattern === 'string' ? pattern : pattern.source;
    this.flags = flags ?? (typeof pattern === 'string' ? '' : pattern.flags);
    this.re = compileLinear(this.source, this.flags);
  }

  /** Whether the pattern has the `g` (or `y`) flag. */
  get global(): boolean {
    return this.flags.includes('g') || this.flags.includes('y');
  }

  /** The next match in `input`, shaped like a `RegExpExecArray`, or `null`. */
  exec(input: string): RegExpExecArray | null {
    const from = this.global ? this.lastIndex : 0;
    if (from > input.length) {
      this.lastIndex = 0;
      return null;
    }
    // RE2's DFA answers "any match at all?" several times faster than a search for the match's
    // bounds and groups: the common miss (`$contains` false, `$match` none) costs only that.
    if (from === 0 && !this.re.test(input)) {
      if (this.global) this.lastIndex = 0;
      return null;
    }
    if (this.last?.input !== input) this.last = { input, matcher: this.re.matcher(input) };
    const m = this.last.matcher;
    if (!m.find(from)) {
      if (this.global) this.lastIndex = 0;
      return null;
    }
    const groups: (string | undefined)[] = [];
    const count = m.groupCount();
    for (let g = 0; g <= count; g++) groups.push(m.group(g) ?? undefined);
    const out = Object.assign(groups, { index: m.start(), input }) as unknown as RegExpExecArray;
    if (this.global) this.lastIndex = m.end();
    return out;
  }

  /** Whether `input` has a match (moves `lastIndex` like `exec`). */
  test(input: string): boolean {
    return this.exec(input) !== null;
  }

  toString(): string {
    return `/${this.source}/${this.flags}`;
  }
}

/**
 * A regular-expression engine for Ajv's `code.regExp` option: JSON Schema `pattern`,
 * `patternProperties` and `propertyNames` patterns compiled for RE2.
 *
 * Ajv calls it once per pattern while compiling a schema, so a pattern that is not JavaScript
 * syntax fails the compile with RegExp's SyntaxError, and one RE2 cannot run with an
 * {@link UnsupportedRegexError}. `toString` differs per pattern, as Ajv keys its
 * cache of pattern objects on it.
 */
export const ajvLinearRegExp = Object.assign(
  (pattern: string, u: string): { test: (s: string) => boolean; toString: () => string } => {
    // JSON Schema patterns are JavaScript syntax: refuse what RegExp refuses (construction only,
    // never a match), as Ajv's default engine did.
    new RegExp(pattern, u);
    const re = compileLinear(pattern, u);
    return { test: (s: string) => re.test(s), toString: () => `/${pattern}/${u}` };
  },
  // Ajv writes this into standalone code only, which Runnel never generates.
  { code: 'ajvLinearRegExp' },
);
