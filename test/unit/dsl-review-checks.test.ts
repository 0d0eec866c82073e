/**
 * Validation and template gaps a newcomer review found: each kind is now refused with a problem
 * (or a clear node error) instead of passing and failing later, or rendering silently wrong.
 */
import { describe, expect, it } from 'vitest';
import { EngineError } from '../../engine/errors';
import { renderTemplates, type ExpressionScope } from '../../engine/dsl/expressions';
import { checkVariables, compileInputSchema } from '../../engine/dsl/input-schema';
import { parseWorkflowText } from '../../engine/dsl/parse';
import { formatProblems, validateWorkflow, type Problem } from '../../engine/dsl/validate';
import { createDefaultRegistry } from '../../engine/nodes/registry';
import { scriptSyntaxProblems } from '../../engine/nodes/script';

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

function thrown(fn: () => unknown): EngineError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(EngineError);
    return err as EngineError;
  }
  throw new Error('expected an EngineError');
}

async function rejected(promise: Promise<unknown>): Promise<EngineError> {
  const err: unknown = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(EngineError);
  return err as EngineError;
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
    const bad = thrown(() => checkVariables(wf, { amount: -1 }));
    expect(bad.code).toBe('INVALID_VARIABLES');
    expect(bad.message).toContain('amount must be >= 0');
    expect(thrown(() => checkVariables(wf, [1])).code).toBe('INVALID_VARIABLES');
    const broken = thrown(() => checkVariables({ name: 'x', inputSchema: { type: 'objekt' } }, {}));
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

describe('templates and outputs at validation', () => {
  it('an unclosed template is EXPRESSION_PARSE naming the node and the config path', () => {
    const p = onlyProblem(one({ type: 'http', config: { url: 'http://x/{{ a ' } }), 'EXPRESSION_PARSE');
    expect(p.nodeId).toBe('n');
    expect(p.path).toEqual(['nodes', 0, 'config', 'url']);
    expect(p.message).toMatch(/^node "n": template in config\.url is not closed/);
    const nested = onlyProblem(
      one({ type: 'http', config: { url: 'http://x/', method: 'POST', body: { items: ['ok', '{{ b'] } } }),
      'EXPRESSION_PARSE',
    );
    expect(nested.path).toEqual(['nodes', 0, 'config', 'body', 'items', 1]);
  });

  it('an unclosed template in a compensation is named too', () => {
    const p = onlyProblem(
      one({ type: 'pass', compensate: { type: 'http', config: { url: '{{ base }}/undo/{{ id' } } }),
      'EXPRESSION_PARSE',
    );
    expect(p.message).toContain('compensate.config.url');
  });

  it.each(['$steps', '$result', '$x'])('an output named %s is INVALID_OUTPUT', (output) => {
    const p = onlyProblem(one({ type: 'pass', output }), 'INVALID_OUTPUT');
    expect(p.nodeId).toBe('n');
    expect(p.path).toEqual(['nodes', 0, 'output']);
    expect(p.message).toContain(JSON.stringify(output));
  });

  it('outputs that are plain names or expressions starting with $ are fine', () => {
    expect(problems(one({ type: 'pass', output: 'result' }))).toEqual([]);
    expect(problems(one({ type: 'pass', output: '$merge([{ "a": $result }])' }))).toEqual([]);
  });
});

describe('http urls at validation', () => {
  it.each(['file:///etc/passwd', 'ftp://example.com/x', 'javascript:alert(1)', '/relative', 'example.com/x'])(
    'a literal %s is INVALID_CONFIG naming config.url',
    (url) => {
      const p = onlyProblem(one({ type: 'http', config: { url } }), 'INVALID_CONFIG');
      expect(p.path).toEqual(['nodes', 0, 'config', 'url']);
      expect(p.message).toMatch(/config\.url: must be an absolute http: or https: URL/);
    },
  );

  it('http(s) and templated urls pass (a templated one is checked once rendered)', () => {
    expect(problems(one({ type: 'http', config: { url: 'https://example.com/a?b=1' } }))).toEqual([]);
    expect(problems(one({ type: 'http', config: { url: '{{ base }}/devices' } }))).toEqual([]);
  });
});

describe('script code at validation (the type’s validateConfig hook)', () => {
  it('a syntax error is INVALID_CONFIG naming the node', () => {
    const p = onlyProblem(one({ type: 'script', config: { code: 'return (((' } }), 'INVALID_CONFIG');
    expect(p.nodeId).toBe('n');
    expect(p.message).toMatch(/^node "n": config: code has a syntax error/);
    const located = onlyProblem(one({ type: 'script', config: { code: 'const a = 1;\nconst = 2;\nreturn a' } }), 'INVALID_CONFIG');
    expect(located.message).toContain('line 2');
  });

  it('code that closes its function early is refused', () => {
    const p = onlyProblem(one({ type: 'script', config: { code: '}); (function () {' } }), 'INVALID_CONFIG');
    expect(p.message).toContain('closes the function early');
  });

  it('valid code passes, and the check never runs the code', () => {
    expect(scriptSyntaxProblems('globalThis.ran = true; return input.a + 1')).toEqual([]);
    expect((globalThis as { ran?: boolean }).ran).toBeUndefined();
    expect(problems(one({ type: 'script', config: { code: 'return input.a + 1' } }))).toEqual([]);
  });
});

describe('duplicate keys in JSON input', () => {
  it('are refused like YAML’s, naming the key and the line', () => {
    const text = '{\n  "name": "w",\n  "nodes": [\n    { "id": "a", "type": "pass", "id": "b" }\n  ]\n}\n';
    const err = thrown(() => parseWorkflowText(text, 'w.json'));
    expect(err.code).toBe('INVALID_WORKFLOW');
    expect(err.message).toMatch(/^w\.json:4:\d+: invalid JSON: duplicate key "id"/);
    expect(err.details).toMatchObject({ line: 4, format: 'JSON' });
    const top = thrown(() => parseWorkflowText('{"name":"a","nodes":[],"name":"b"}'));
    expect(top.message).toContain('duplicate key "name"');
  });

  it('equal keys in different objects are fine', () => {
    expect(parseWorkflowText('{"a":{"id":1},"b":{"id":2}}', 'w.json')).toEqual({ a: { id: 1 }, b: { id: 2 } });
  });
});

describe('templates never render a missing value silently', () => {
  const scope: ExpressionScope = { variables: { base: 'http://x', n: null, device: { id: 'd1' } } };

  it('a template reading a missing variable fails, non-retryable, naming the variable and the path', async () => {
    const err = await rejected(renderTemplates({ url: '{{ base }}/{{ missing.deep }}/{{ n }}' }, scope));
    expect(err.code).toBe('EXPRESSION_ERROR');
    expect(err.retryable).toBe(false);
    expect(err.message).toMatch(/^template \{\{ missing\.deep \}\} in config\.url reads missing variable "missing"/);
    expect(err.details).toMatchObject({ missing: ['missing'], path: 'config.url' });
    const whole = await rejected(renderTemplates({ body: { to: '{{ who }}' } }, scope));
    expect(whole.message).toContain('config.body.to reads missing variable "who"');
  });

  it('a template inside text that yields no value fails', async () => {
    const err = await rejected(renderTemplates({ url: '{{ base }}/devices/{{ device.serial }}' }, scope));
    expect(err.message).toMatch(/yields no value/);
  });

  it('$exists guards still work, null stays null, and $encodeUrlComponent encodes', async () => {
    expect(
      await renderTemplates(
        {
          to: '{{ $exists(who) ? who : "nobody" }}',
          text: 'hi {{ $exists(who) ? who : "there" }}',
          n: '{{ n }}',
          inText: 'n={{ n }}',
          url: '{{ base }}/d/{{ $encodeUrlComponent("a b/ü") }}',
        },
        scope,
      ),
    ).toEqual({ to: 'nobody', text: 'hi there', n: null, inText: 'n=null', url: 'http://x/d/a%20b%2F%C3%BC' });
  });
});
