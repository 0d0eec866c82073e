/**
 * Where a script's errors are: the line and column in the user's own code, not in the wrapper the
 * sandbox compiles it in (`(function (input, variables, steps) {` before it on line 1, `\n})`
 * after it). The designer's check (acorn) and the sandbox (QuickJS) must name the same place.
 */
import { describe, expect, it } from 'vitest';
import { EngineError } from '../../../engine/errors';
import { scriptLocation, scriptSyntaxError, scriptSyntaxProblems } from '../../../engine/nodes/script-config';
import { scriptStack } from '../../../engine/nodes/script-sandbox';
import { ScriptConfigSchema, scriptNode, type ScriptConfig } from '../../../engine/nodes/script';
import { checkScriptSyntax } from '../../../renderer/src/designer/validation';
import { makeContext } from '../../helpers/node-context';

/** The error the sandbox throws for `code`. */
async function runError(code: string): Promise<EngineError> {
  const err: unknown = await scriptNode
    .execute(makeContext<ScriptConfig>({ config: ScriptConfigSchema.parse({ code }) }))
    .then(
      () => undefined,
      (e: unknown) => e,
    );
  expect(err).toBeInstanceOf(EngineError);
  return err as EngineError;
}

describe('a syntax error, placed in the code', () => {
  it('on line 1: line 1, the column counted from the code’s first character', async () => {
    // given a one-line script whose ";" (column 11) is unexpected
    const code = 'const x = ;';
    // when the designer checks it and the sandbox compiles it
    const designer = checkScriptSyntax(code);
    const engine = await runError(code);
    // then both say line 1, column 11
    expect(designer).toMatchObject({ line: 1, column: 11 });
    expect(engine.code).toBe('SCRIPT_ERROR');
    expect(engine.retryable).toBe(false);
    expect(engine.details).toMatchObject({ name: 'SyntaxError', line: 1, column: 11 });
    expect(engine.message).toMatch(/^script has a syntax error: .* \(line 1, column 11\)$/u);
    expect(scriptSyntaxProblems(code)).toEqual([expect.stringMatching(/^code has a syntax error at line 1, column 11: /u)]);
  });

  it('on line 3: line 3 and its own column', async () => {
    const code = 'const a = 1;\nconst b = 2;\nconst c = ;';
    expect(checkScriptSyntax(code)).toMatchObject({ line: 3, column: 11 });
    const engine = await runError(code);
    expect(engine.details).toMatchObject({ line: 3, column: 11 });
    expect(engine.message).toContain('(line 3, column 11)');
  });

  it('code that ends too early is placed at its end, never on the wrapper’s closing line', async () => {
    // given one line with an unclosed bracket: the parser stops at the wrapper's "}" on line 2
    for (const [code, line, column] of [
      ['return (', 1, 9],
      ['const a = 1;\nreturn a +\n', 3, 1],
    ] as const) {
      const designer = checkScriptSyntax(code);
      expect(designer, code).toEqual({ line, column, atEnd: true, message: expect.stringContaining('ends too early') });
      const engine = await runError(code);
      expect(engine.details, code).toMatchObject({ line, column });
      expect(engine.message, code).toBe(
        `script has a syntax error: the code ends too early (an unclosed bracket, string or expression) (line ${line}, column ${column})`,
      );
    }
  });

  it('a "}" that closes the wrapper’s function is named where it is (braces in strings do not count)', () => {
    expect(checkScriptSyntax('const s = "}";\nreturn 1 }); (function () {')).toMatchObject({
      line: 2,
      column: 10,
      message: expect.stringContaining('closes its function early'),
    });
  });
});

describe('a runtime error’s place and stack', () => {
  it('on line 1: details.line/column in the code, the stack without the wrapper or the runner', async () => {
    // given a script that throws on its only line, QuickJS places it at the call, column 16
    const err = await runError('throw new Error("boom")');
    expect(err.message).toBe('script threw Error: boom');
    expect(err.details).toMatchObject({ name: 'Error', line: 1, column: 16 });
    expect((err.details as { stack: string }).stack).toBe('    at <anonymous> (script.js:1:16)');
  });

  it('on line 3, through a function on line 2: every frame in the code', async () => {
    const err = await runError('const a = 1;\nconst f = () => { throw new TypeError("t") };\nf()');
    expect(err.details).toMatchObject({ name: 'TypeError', line: 2, column: 38 });
    expect((err.details as { stack: string }).stack).toBe('    at f (script.js:2:38)\n    at <anonymous> (script.js:3:2)');
  });

  it('maps places and stacks alone (pure)', () => {
    const prefix = '(function (input, variables, steps) {'.length;
    expect(scriptLocation('abc', 1, prefix + 2)).toEqual({ line: 1, column: 2 });
    expect(scriptLocation('a\nbcd', 2, 3)).toEqual({ line: 2, column: 3 });
    expect(scriptLocation('a\nbcd', 3, 1)).toEqual({ line: 2, column: 4, atEnd: true });
    expect(scriptStack(`    at g (script.js:1:${prefix + 5})\n    at call (runnel-prelude.js:15:51)\n`, 'x')).toBe('    at g (script.js:1:5)');
    expect(scriptSyntaxError('return 1')).toBeUndefined();
  });
});
