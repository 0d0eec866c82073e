/**
 * `inputSchema` patterns run on RE2: `^(a|a)*$` with a 29-character value held the host 11 s
 * under Ajv's default (backtracking) engine; now it answers at once with the same verdict. A
 * pattern RE2 cannot run is a validation problem naming its path, in the renderer too.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { EngineError } from '../../../engine/errors';
import { checkVariables, compileInputSchema, schemaPatternProblems } from '../../../engine/dsl/input-schema';
import { validateWorkflow, type Problem, type TypeCatalog } from '../../../engine/dsl/validate';

const catalog: TypeCatalog = (type) => (type === 'pass' ? { configSchema: z.object({}).loose() } : undefined);

function workflow(inputSchema: Record<string, unknown>) {
  return { name: 'w', inputSchema, nodes: [{ id: 'n', type: 'pass' }] };
}

function thrown(run: () => unknown): EngineError {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(EngineError);
    return err as EngineError;
  }
  throw new Error('expected a throw');
}

/**
 * Runs `run`, returning the CPU time this process spent on it in ms (not wall time: a loaded
 * machine's other work does not count). A backtracking engine takes seconds to hours here; RE2
 * takes well under a millisecond a check, so the bound only separates the two.
 */
function timed(run: () => void): number {
  const t0 = process.cpuUsage();
  run();
  const d = process.cpuUsage(t0);
  return (d.user + d.system) / 1000;
}

describe('catastrophic patterns are checked in linear time, with the right verdict', () => {
  const schema = { type: 'object', properties: { code: { type: 'string', pattern: '^(a|a)*$' } } };
  const wf = { name: 'codes', inputSchema: schema };

  it('pattern ^(a|a)*$ with 29 and 10 000 characters', () => {
    // The schema's compile is not what is timed.
    checkVariables(wf, { code: 'a' });
    for (const n of [29, 10_000]) {
      const ok = `${'a'.repeat(n)}`;
      const bad = `${'a'.repeat(n)}!`;
      expect(timed(() => expect(checkVariables(wf, { code: ok })).toEqual({ code: ok }))).toBeLessThan(250);
      const ms = timed(() => {
        const err = thrown(() => checkVariables(wf, { code: bad }));
        expect(err.code).toBe('INVALID_VARIABLES');
        expect(err.details).toEqual([{ field: 'code', message: 'must match pattern "^(a|a)*$"' }]);
      });
      expect(ms).toBeLessThan(250);
    }
  });

  it('patternProperties keys run on RE2 too', () => {
    const byKey = {
      name: 'keys',
      inputSchema: { type: 'object', patternProperties: { '^(a|a)*$': { type: 'number' } } },
    };
    const hostileKey = `${'a'.repeat(29)}!`;
    // The key does not match the pattern, so its string value is not checked.
    expect(timed(() => checkVariables(byKey, { [hostileKey]: 'text' }))).toBeLessThan(250);
    const err = thrown(() => checkVariables(byKey, { [hostileKey.slice(0, -1)]: 'text' }));
    expect(err.code).toBe('INVALID_VARIABLES');
    expect(err.message).toContain('must be number');
  });

  it('Unicode patterns keep their meaning (Ajv compiles with the u flag)', () => {
    const letters = { name: 'l', inputSchema: { type: 'object', properties: { s: { type: 'string', pattern: '^\\p{L}{2}$' } } } };
    expect(checkVariables(letters, { s: 'éß' })).toEqual({ s: 'éß' });
    expect(thrown(() => checkVariables(letters, { s: 'é1' })).code).toBe('INVALID_VARIABLES');
  });
});

describe('patterns RE2 cannot run', () => {
  const backreference = {
    type: 'object',
    properties: { code: { type: 'string', pattern: '(a)\\1' } },
    patternProperties: { '^x(?=y)': { type: 'string' } },
  };

  it('are UNSUPPORTED_REGEX problems naming the path and the construct, with or without Ajv', () => {
    for (const compile of [true, false]) {
      const problems: Problem[] = validateWorkflow(workflow(backreference), catalog, { compileInputSchema: compile }).problems;
      // A schema's own patterns come before those of its subschemas.
      expect(problems.map((p) => [p.code, p.path])).toEqual([
        ['UNSUPPORTED_REGEX', ['inputSchema', 'patternProperties', '^x(?=y)']],
        ['UNSUPPORTED_REGEX', ['inputSchema', 'properties', 'code', 'pattern']],
      ]);
      expect(problems[1]?.message).toBe(
        'workflow: inputSchema.properties.code.pattern "(a)\\\\1" uses a backreference `\\1`, which RE2 ' +
          "(Runnel's linear-time regular expression engine) does not support",
      );
      expect(problems[0]?.message).toMatch(/inputSchema\.patternProperties\["\^x\(\?=y\)"\] .* a lookahead `\(\?=`/u);
    }
  });

  it('a start against such a schema is INVALID_WORKFLOW naming the pattern (never INTERNAL)', () => {
    const schema = { type: 'object', properties: { code: { type: 'string', pattern: '(a)\\1' } } };
    const err = thrown(() => checkVariables({ name: 'w', inputSchema: schema }, { code: 'aa' }));
    expect(err.code).toBe('INVALID_WORKFLOW');
    expect(err.message).toMatch(/inputSchema\.properties\.code\.pattern "\(a\)\\\\1" uses a backreference/u);
    expect(compileInputSchema(backreference)).toMatchObject({ ok: false });
  });

  it('a pattern that is not a regular expression at all stays INVALID_INPUT_SCHEMA', () => {
    const problems = validateWorkflow(workflow({ type: 'object', properties: { s: { pattern: '(' } } }), catalog).problems;
    expect(problems.map((p) => [p.code, p.path])).toEqual([['INVALID_INPUT_SCHEMA', ['inputSchema', 'properties', 's', 'pattern']]]);
    expect(problems[0]?.message).toMatch(/pattern "\(" is not a regular expression/u);
  });

  it('are found in nested subschemas, but not in data (enum, const, default, examples)', () => {
    const schema = {
      type: 'object',
      properties: {
        list: { type: 'array', items: { anyOf: [{ type: 'string', pattern: '(?<=a)b' }] } },
        data: { const: { pattern: '(a)\\1' }, default: { pattern: '(a)\\1' }, enum: [{ pattern: '(a)\\1' }] },
      },
      definitions: { d: { not: { pattern: '\\k<n>' } } },
    };
    expect(schemaPatternProblems(schema).map((p) => p.path)).toEqual([
      ['properties', 'list', 'items', 'anyOf', 0, 'pattern'],
      ['definitions', 'd', 'not', 'pattern'],
    ]);
  });
});
