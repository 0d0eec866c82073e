/**
 * A workflow's inputSchema (engine/dsl/input-schema.ts): compiled with Ajv at validation, so a
 * schema Ajv refuses is INVALID_INPUT_SCHEMA with Ajv's reason (skipped where code generation is
 * not allowed, as in the renderer); `checkVariables` refuses variables as INVALID_VARIABLES and an
 * uncompilable schema as INVALID_WORKFLOW, never INTERNAL; each schema object compiles once.
 */
import { describe, expect, it } from 'vitest';
import { checkVariables, compileInputSchema } from '../../../engine/dsl/input-schema';
import { formatProblems, validateWorkflow, type Problem } from '../../../engine/dsl/validate';
import { createDefaultRegistry } from '../../../engine/nodes/registry';
import { thrownBy } from '../../helpers/engine-errors';

const catalog = createDefaultRegistry().catalog();

function problems(raw: unknown): Problem[] {
  return validateWorkflow(raw, catalog).problems;
}

function onlyProblem(raw: unknown, code: string): Problem {
  const all = problems(raw);
  const matching = all.filter((p) => p.code === code);
  expect(matching, formatProblems(all)).toHaveLength(1);
  return matching[0] as Problem;
}


const one = (node: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  name: 'w',
  nodes: [{ id: 'n', ...node }],
  ...extra,
});

describe('inputSchema is compiled at validation', () => {
  it.each([
    [{ type: 'objekt' }, /type must be equal to one of the allowed values/],
    [{ type: 'object', properties: { amount: { type: 'numbr' } } }, /properties\/amount\/type/],
    [{ type: 'object', required: 'amount' }, /required must be array/],
    [{ type: 'object', $ref: 'http://example.com/nowhere.json' }, /can't resolve reference/],
  ])('refuses %j with INVALID_INPUT_SCHEMA naming inputSchema and Ajv’s reason', (schema, reason) => {
    const p = onlyProblem(one({ type: 'pass' }, { inputSchema: schema }), 'INVALID_INPUT_SCHEMA');
    expect(p.path).toEqual(['inputSchema']);
    expect(p.message).toMatch(/^workflow: inputSchema is not a valid JSON Schema: /);
    expect(p.message).toMatch(reason);
  });

  it('accepts valid schemas, also two that share an $id', () => {
    const schema = () => ({ $id: 'purchase', type: 'object', properties: { amount: { type: 'number', minimum: 0 } } });
    expect(problems(one({ type: 'pass' }, { inputSchema: schema() }))).toEqual([]);
    expect(problems(one({ type: 'pass' }, { inputSchema: schema() }))).toEqual([]);
  });

  it('skips the compile where code generation is not allowed (the renderer), keeping the light check', () => {
    const raw = one({ type: 'pass' }, { inputSchema: { type: 'objekt' } });
    expect(validateWorkflow(raw, catalog, { compileInputSchema: false }).problems).toEqual([]);
  });

  it('checkVariables: refused variables are INVALID_VARIABLES, an uncompilable schema INVALID_WORKFLOW (never INTERNAL)', () => {
    const wf = { name: 'buy', inputSchema: { type: 'object', properties: { amount: { type: 'number', minimum: 0 } } } };
    expect(checkVariables(wf, { amount: 3 })).toEqual({ amount: 3 });
    const bad = thrownBy(() => checkVariables(wf, { amount: -1 }));
    expect(bad.code).toBe('INVALID_VARIABLES');
    expect(bad.message).toContain('amount must be >= 0');
    expect(thrownBy(() => checkVariables(wf, [1])).code).toBe('INVALID_VARIABLES');
    const broken = thrownBy(() => checkVariables({ name: 'x', inputSchema: { type: 'objekt' } }, {}));
    expect(broken.code).toBe('INVALID_WORKFLOW');
    expect(broken.kind).toBe('user');
    expect(broken.message).toMatch(/inputSchema is not a valid JSON Schema/);
  });

  it('compiles each schema object once', () => {
    const schema = { type: 'object' };
    const first = compileInputSchema(schema);
    expect(compileInputSchema(schema)).toBe(first);
  });
});

describe("an approval's form", () => {
  it('is checked at validation as a JSON Schema, its patterns included, naming config.form; a valid form passes', () => {
    // given: a form Ajv refuses, one whose pattern RE2 cannot run, and a valid one
    const bad = onlyProblem(one({ type: 'approval', config: { form: { type: 'bogus' } } }), 'INVALID_CONFIG');
    expect(bad.message).toMatch(/^node "n": config\.form is not a valid JSON Schema: schema is invalid: data\/type must be equal to one of the allowed values/);
    expect(bad.path).toEqual(['nodes', 0, 'config', 'form']);
    const lookahead = onlyProblem(
      one({ type: 'approval', config: { form: { type: 'object', properties: { x: { type: 'string', pattern: '(?=a)' } } } } }),
      'UNSUPPORTED_REGEX',
    );
    expect(lookahead.message).toMatch(/^node "n": config\.form\.properties\.x\.pattern "\(\?=a\)" uses a lookahead/);
    expect(lookahead.path).toEqual(['nodes', 0, 'config', 'form', 'properties', 'x', 'pattern']);
    expect(problems(one({ type: 'approval', config: { form: { type: 'object', properties: { x: { type: 'string', pattern: '^[a-z]+$' } }, required: ['x'] } } }))).toEqual([]);
  });
});
