/**
 * Regular expressions in JSONata run on RE2 (linear time): the patterns that took a backtracking
 * engine a minute on 30 characters answer in milliseconds with RE2's answer; what RE2 cannot run
 * is refused naming the construct, at validation where it is literal and at run time otherwise.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { EngineError } from '../../../engine/errors';
import { evaluateExpression, parseExpression } from '../../../engine/dsl/expressions';
import { LinearRegExp, regexProblem } from '../../../engine/dsl/regex';
import { validateWorkflow, type Problem, type TypeCatalog } from '../../../engine/dsl/validate';

/** 30 characters, the input: `a` × 29 and a `!` that makes every match attempt fail. */
const HOSTILE = `${'a'.repeat(29)}!`;
/** The same shape, 100 000 characters long. */
const LONG = `${'a'.repeat(99_999)}!`;

/** Evaluates `src` with `s` bound as a global; returns the value and the wall time in ms. */
async function timed(src: string, s: string): Promise<{ value: unknown; ms: number }> {
  const t0 = performance.now();
  const value = await evaluateExpression(src, { variables: { s } });
  return { value, ms: performance.now() - t0 };
}

async function expressionError(run: () => Promise<unknown>): Promise<EngineError> {
  const err = await run().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(EngineError);
  expect((err as EngineError).code).toBe('EXPRESSION_ERROR');
  return err as EngineError;
}

describe('catastrophic patterns run in linear time', () => {
  beforeAll(async () => {
    // The first regex of a process also pays for loading and compiling the engine's code; under
    // a busy machine that alone took ~0.6 s once. Paid here, with another pattern.
    await evaluateExpression('$match("warm up", /w(a)r?m+/)', { variables: {} });
  });

  // Before RE2 (issue 17): $match 61 s, $contains 88 s, $replace 71 s, $split killed at 90 s.
  it.each([
    ['$match(s, /(a+)+$/)', undefined],
    ['$contains(s, /^(a|a)*$/)', false],
    ['$replace(s, /(a+)+$/, "x")', HOSTILE],
    ['$split(s, /(a|a)*b/)', [HOSTILE]],
  ])('%s on "a…a!" (30 characters) answers in milliseconds', async (src, expected) => {
    const { value, ms } = await timed(src, HOSTILE);
    expect(value).toEqual(expected);
    expect(ms).toBeLessThan(250);
  });

  it('gives the matches where there are some, as RE2 finds them', async () => {
    const aaaa = 'aaaa';
    expect((await timed('$match(s, /(a+)+$/)', aaaa)).value).toEqual({ match: 'aaaa', index: 0, groups: ['aaaa'] });
    expect((await timed('$contains(s, /^(a|a)*$/)', aaaa)).value).toBe(true);
    expect((await timed('$replace(s, /(a+)+$/, "<$1>")', 'xaa')).value).toBe('x<aa>');
    expect((await timed('$split(s, /(a|a)*b/)', 'xaabyb')).value).toEqual(['x', 'y', '']);
  });

  it('stays linear on 100 000 characters', async () => {
    const match = await timed('$match(s, /(a+)+$/)', LONG);
    expect(match.value).toBeUndefined();
    const contains = await timed('$contains(s, /^(a|a)*$/)', LONG);
    expect(contains.value).toBe(false);
    // ~40 ms each here; a backtracking engine would not finish.
    expect(match.ms + contains.ms).toBeLessThan(1000);
  });
});

describe('JSONata regex functions keep their meaning on RE2', () => {
  const ev = (src: string) => evaluateExpression(src, { variables: {} });

  it('$match: every match with index and groups; an unmatched group is undefined', async () => {
    expect(await ev('$match("xaxa", /a/)')).toEqual([
      { match: 'a', index: 1, groups: [] },
      { match: 'a', index: 3, groups: [] },
    ]);
    expect(await ev('$match("ab", /(x)?(a)(b)/)')).toEqual({ match: 'ab', index: 0, groups: [undefined, 'a', 'b'] });
    // Indices count UTF-16 code units, as in JavaScript.
    expect(await ev('$match("😀a", /a/)')).toEqual({ match: 'a', index: 2, groups: [] });
    // `^` matches only at the start, however far the search has gone.
    expect(await ev('$match("aaa", /^a/)')).toEqual({ match: 'a', index: 0, groups: [] });
    expect(await ev('$match("a1b22c333", /[0-9]+/, 2).match')).toEqual(['1', '22']);
  });

  it('flags i and m', async () => {
    expect(await ev('$match("AbC", /b/i).index')).toBe(1);
    expect(await ev('$match("one\\ntwo", /^t\\w+$/m).match')).toBe('two');
    expect(await ev('$contains("one\\ntwo", /^two/)')).toBe(false);
  });

  it('$replace with groups, $split, $contains, and a regex in a path filter', async () => {
    expect(await ev('$replace("hello world", /(\\w+) (\\w+)/, "$2 $1")')).toBe('world hello');
    expect(await ev('$replace("a-b-c", /-/, "+", 1)')).toBe('a+b-c');
    expect(await ev('$split("a, b,c", /,\\s*/)')).toEqual(['a', 'b', 'c']);
    expect(await ev('$contains("device-42", /^device-[0-9]+$/)')).toBe(true);
    expect(await ev('["ab", "cd", "ax"][$contains($, /^a/)]')).toEqual(['ab', 'ax']);
  });

  it('a pattern matching the empty string is still jsonata\'s error, not a hang', async () => {
    const err = await expressionError(() => ev('$match("abc", /x*/)'));
    expect(err.message).toMatch(/zero length/u);
  });

  it('RE2 semantics where they differ from JavaScript: \\s is ASCII whitespace, . matches \\r', async () => {
    expect(await ev('$contains("a\\u00a0b", /a\\sb/)')).toBe(false);
    expect(await ev('$contains("a\\rb", /a.b/)')).toBe(true);
  });
});

describe('LinearRegExp follows RegExp.prototype.exec', () => {
  it('with g: starts at lastIndex, moves it past the match, and resets it on a miss', () => {
    const re = new LinearRegExp(/a(b)?/g);
    const first = re.exec('xaab');
    expect(first?.[0]).toBe('a');
    expect(first?.[1]).toBeUndefined();
    expect(first?.index).toBe(1);
    expect(re.lastIndex).toBe(2);
    const second = re.exec('xaab');
    expect([...(second ?? [])]).toEqual(['ab', 'b']);
    expect(re.lastIndex).toBe(4);
    expect(re.exec('xaab')).toBeNull();
    expect(re.lastIndex).toBe(0);
    re.lastIndex = 99;
    expect(re.exec('xaab')).toBeNull();
    expect(re.lastIndex).toBe(0);
  });

  it('without g: always from the start, lastIndex untouched', () => {
    const re = new LinearRegExp('b', 'i');
    re.lastIndex = 5;
    expect(re.exec('aBab')?.index).toBe(1);
    expect(re.lastIndex).toBe(5);
    expect(re.test('xyz')).toBe(false);
    expect(String(re)).toBe('/b/i');
  });
});

describe('constructs RE2 cannot run are refused, naming them', () => {
  it.each([
    ['(a)\\1', 'a backreference `\\1`'],
    ['(?<x>a)\\k<x>', 'a named backreference `\\k<x>`'],
    ['(?=a)', 'a lookahead `(?=`'],
    ['a(?!b)', 'a negative lookahead `(?!`'],
    ['(?<=a)b', 'a lookbehind `(?<=`'],
    ['(?<!a)b', 'a negative lookbehind `(?<!`'],
  ])('/%s/', (source, construct) => {
    expect(regexProblem(source)).toBe(
      `uses ${construct}, which RE2 (Runnel's linear-time regular expression engine) does not support`,
    );
  });

  it("RE2's own limits come with RE2's reason", () => {
    expect(regexProblem('a{1001}')).toMatch(/cannot run on RE2 .*invalid repeat count `\{1001\}`/u);
  });

  it('look-alikes are not refused: an escaped backslash, a class, a plain group', () => {
    expect(regexProblem('\\\\1')).toBeUndefined();
    expect(regexProblem('[(?=]')).toBeUndefined();
    expect(regexProblem('[]\\1]')).toBeDefined(); // JavaScript's `[]` is empty: `\1` is outside
    expect(regexProblem('(?:a)(?<name>b)')).toBeUndefined();
  });

  it('parseExpression: not ok, `unsupported`, with the literal and its position', () => {
    const parsed = parseExpression('$match(code, /(a)\\1/)');
    expect(parsed).toEqual({
      ok: false,
      unsupported: true,
      position: 20,
      message:
        "regular expression /(a)\\1/ uses a backreference `\\1`, which RE2 (Runnel's linear-time regular expression engine) does not support",
    });
  });

  it('evaluateExpression: EXPRESSION_ERROR naming the literal, before anything runs', async () => {
    const err = await expressionError(() => evaluateExpression('$contains(s, /(?=a)/)', { variables: { s: 'a' } }));
    expect(err.message).toBe(
      "expression `$contains(s, /(?=a)/)` cannot run: regular expression /(?=a)/ uses a lookahead `(?=`, which RE2 (Runnel's linear-time regular expression engine) does not support",
    );
    expect(err.retryable).toBe(false);
  });

  it('$eval: a literal built at run time is refused at run time, as EXPRESSION_ERROR', async () => {
    const err = await expressionError(() =>
      evaluateExpression('$eval("$match(s, /(a)" & "\\\\1/)")', { variables: { s: 'aa' } }),
    );
    expect(err.message).toBe(
      'expression `$eval("$match(s, /(a)" & "\\\\1/)")` failed: in $eval: regular expression /(a)\\1/ uses a ' +
        "backreference `\\1`, which RE2 (Runnel's linear-time regular expression engine) does not support",
    );
  });
});

describe('function signatures jsonata would check by backtracking', () => {
  const many = (n: number) => Array.from({ length: n }, () => '"a"').join(',');

  it('two "+" parameters are refused before evaluation (40 arguments took 2.4 s)', async () => {
    const params = Array.from({ length: 10 }, (_, i) => `$p${i}`).join(',');
    const src = `($f := function(${params})<${'s+'.repeat(10)}:s>{ "x" }; $f(${many(40)}, 1))`;
    expect(parseExpression(src)).toMatchObject({ ok: false, unsupported: true });
    const err = await expressionError(() => evaluateExpression(src, { variables: {} }));
    expect(err.message).toMatch(/marks 10 parameters with "\+"; at most one may be/u);
  });

  it('a choice may list only type letters (jsonata copies it into its pattern)', () => {
    const parsed = parseExpression('function($a)<(](s+)+[):s>{ $a }');
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.message).toMatch(/a choice \(…\) may list only the type letters/u);
  });

  it('ordinary signatures still work, and checking one with many arguments stays fast', async () => {
    expect(await evaluateExpression('(function($a, $b)<sn?:s>{ $a & $string($b) })("x", 1)', { variables: {} })).toBe('x1');
    const src = `(function($a, $b)<s+n?:s>{ "ok" })(${many(2000)}, 1)`;
    const t0 = performance.now();
    expect(await evaluateExpression(src, { variables: {} })).toBe('ok');
    expect(performance.now() - t0).toBeLessThan(1000);
  });

  it('$eval: a refused signature is refused at run time', async () => {
    const err = await expressionError(() =>
      evaluateExpression('$eval("(function($a, $b)<s+s+:s>{ $a })(\\"x\\", \\"y\\")")', { variables: {} }),
    );
    expect(err.message).toMatch(/failed: in \$eval: function signature <s\+s\+:s> marks 2 parameters with "\+"; at most one/u);
  });
});

describe('validation reports each unrunnable regex as UNSUPPORTED_REGEX, naming node and field', () => {
  const catalog: TypeCatalog = (type) =>
    type === 'pass' || type === 'http'
      ? { configSchema: z.object({ url: z.string().optional(), result: z.unknown().optional() }) }
      : undefined;
  const problems = (raw: unknown): Problem[] => validateWorkflow(raw, catalog).problems;

  it('in output, input, an edge when and a config template', () => {
    const found = problems({
      name: 'w',
      nodes: [
        { id: 'a', type: 'pass', output: '{ "m": $match($result, /(a)\\1/) }', input: '$contains(x, /(?=x)/)' },
        { id: 'b', type: 'http', config: { url: 'http://x/{{ $replace(id, /(?<!a)b/, "") }}' } },
      ],
      edges: [{ from: 'a', to: 'b', when: '$contains(x, /a(?!b)/)' }],
    });
    expect(found.map((p) => [p.code, p.nodeId ?? p.edgeId, p.path])).toEqual([
      ['UNSUPPORTED_REGEX', 'a', ['nodes', 0, 'input']],
      ['UNSUPPORTED_REGEX', 'a', ['nodes', 0, 'output']],
      ['UNSUPPORTED_REGEX', 'b', ['nodes', 1, 'config', 'url']],
      ['UNSUPPORTED_REGEX', 'a->b', ['edges', 0, 'when']],
    ]);
    expect(found[1]?.message).toBe(
      'node "a": output cannot run: regular expression /(a)\\1/ uses a backreference `\\1`, which RE2 ' +
        "(Runnel's linear-time regular expression engine) does not support (at character 30)",
    );
    expect(found[2]?.message).toMatch(/^node "b": template \{\{.*\}\} in config\.url cannot run: .*a negative lookbehind `\(\?<!`/u);
  });

  it('a syntax error is still EXPRESSION_PARSE', () => {
    const found = problems({ name: 'w', nodes: [{ id: 'a', type: 'pass', output: '{ "m": $match($result, /(a/) }' }] });
    expect(found.map((p) => p.code)).toEqual(['EXPRESSION_PARSE']);
  });
});
