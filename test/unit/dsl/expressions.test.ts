import { describe, expect, it } from 'vitest';
import { EngineError } from '../../../engine/errors';
import {
  applyInput,
  applyOutput,
  evaluateExpression,
  evaluateWhen,
  hasTemplate,
  isIdentifier,
  parseExpression,
  referencedVariables,
  renderTemplates,
  type ExpressionScope,
} from '../../../engine/dsl/expressions';

const scope: ExpressionScope = {
  variables: { baseUrl: 'https://fleet.example', deviceId: 'd-42', targetVersion: 7, limits: { max: 3 } },
  steps: { check: { status: 200, body: { version: 6 } } },
};

async function expressionError(run: () => Promise<unknown>): Promise<EngineError> {
  const err = await run().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(EngineError);
  expect((err as EngineError).code).toBe('EXPRESSION_ERROR');
  return err as EngineError;
}

/** The EngineError a promise rejects with (failing the test when it resolves). */
async function rejected(promise: Promise<unknown>): Promise<EngineError> {
  const err: unknown = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(EngineError);
  return err as EngineError;
}

describe('parseExpression', () => {
  it('accepts valid JSONata and reports a syntax error with its position', () => {
    expect(parseExpression('device.body.version != targetVersion')).toEqual({ ok: true });
    const bad = parseExpression('a +');
    expect(bad.ok).toBe(false);
    if (!bad.ok) {
      expect(bad.message).toMatch(/end of expression/u);
      expect(bad.position).toBe(3);
    }
  });
});

describe('evaluateExpression', () => {
  it('sees globals as $, earlier results as $steps, and $result / $error', async () => {
    const s: ExpressionScope = { ...scope, result: { ok: true }, error: { code: 'HTTP_ERROR' } };
    expect(await evaluateExpression('targetVersion + 1', s)).toBe(8);
    expect(await evaluateExpression('$.deviceId', s)).toBe('d-42');
    expect(await evaluateExpression('$steps.check.body.version', s)).toBe(6);
    expect(await evaluateExpression('$result.ok', s)).toBe(true);
    expect(await evaluateExpression('$error.code', s)).toBe('HTTP_ERROR');
  });

  it('returns plain arrays and copies, never the scope objects themselves', async () => {
    const value = await evaluateExpression('[1, 2, 3].($ * 2)', scope);
    expect(value).toEqual([2, 4, 6]);
    expect(Object.keys(value as object)).toEqual(['0', '1', '2']);
    const limits = await evaluateExpression('limits', scope);
    expect(limits).toEqual({ max: 3 });
    expect(limits).not.toBe(scope.variables['limits']);
  });

  it('names the expression when it fails to parse or evaluate', async () => {
    const parse = await expressionError(() => evaluateExpression('a +', scope));
    expect(parse.message).toContain('`a +`');
    const run = await expressionError(() => evaluateExpression('$number("x") + $undefinedFn()', scope));
    expect(run.message).toContain('$number("x")');
    expect(run.retryable).toBe(false);
  });

  it('stops a runaway (tail-recursive, so never deeper) expression at its time limit', async () => {
    const started = Date.now();
    const err = await expressionError(() =>
      evaluateExpression('( $loop := function($n) { $loop($n + 1) }; $loop(0) )', scope, { timeoutMs: 200 }),
    );
    expect(err.message).toMatch(/timeout/iu);
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('stops unbounded non-tail recursion by depth, long before the time limit', async () => {
    const started = Date.now();
    const err = await expressionError(() =>
      evaluateExpression('( $deep := function($n) { 1 + $deep($n + 1) }; $deep(0) )', scope, {
        timeoutMs: 10_000,
      }),
    );
    expect(err.message).toMatch(/stack overflow/iu);
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('still allows honest recursion', async () => {
    const src = '( $fact := function($n) { $n <= 1 ? 1 : $n * $fact($n - 1) }; $fact(20) )';
    expect(await evaluateExpression(src, scope)).toBe(2432902008176640000);
  });

  it('cannot reach the host through prototypes or constructors', async () => {
    expect(await evaluateExpression('limits.constructor', scope)).toBeUndefined();
    expect(await evaluateExpression('$type(limits.__proto__)', scope)).toBeUndefined();
    expect(
      await evaluateExpression('limits.constructor.constructor("return process")()', scope),
    ).toBeUndefined();
    expect(await evaluateExpression('$eval("$type(process)")', scope)).toBeUndefined();
  });

  it('refuses to hand back a function as data', async () => {
    await expressionError(() => evaluateExpression('$uppercase', scope));
  });
});

describe('templates', () => {
  it('keeps the value type when the whole string is one template', async () => {
    const rendered = await renderTemplates(
      {
        count: '{{ limits.max }}',
        limits: '{{ limits }}',
        ok: '{{ targetVersion > 6 }}',
        list: ['{{ [1, 2] }}', 'plain'],
        nested: { obj: '{{ {"a": {"b": targetVersion}} }}' },
      },
      scope,
    );
    expect(rendered).toEqual({
      count: 3,
      limits: { max: 3 },
      ok: true,
      list: [[1, 2], 'plain'],
      nested: { obj: { a: { b: 7 } } },
    });
  });

  it('stringifies values inside surrounding text', async () => {
    const input = {
      url: '{{ baseUrl }}/devices/{{ deviceId }}',
      label: 'limits={{ limits }} missing=[{{ $exists(nothing) ? nothing : "" }}] v={{ targetVersion }}',
    };
    const rendered = await renderTemplates(input, scope);
    expect(rendered).toEqual({
      url: 'https://fleet.example/devices/d-42',
      label: 'limits={"max":3} missing=[] v=7',
    });
    expect(input.url).toBe('{{ baseUrl }}/devices/{{ deviceId }}');
  });

  it('leaves non-strings and template-free strings alone', async () => {
    expect(await renderTemplates({ n: 5, b: false, z: null, s: 'no { braces }' }, scope)).toEqual({
      n: 5,
      b: false,
      z: null,
      s: 'no { braces }',
    });
  });

  it('detects templates', () => {
    expect(hasTemplate('{{ a }}/x')).toBe(true);
    expect(hasTemplate('{{ unclosed')).toBe(false);
    expect(hasTemplate('plain')).toBe(false);
  });
});

describe('referencedVariables', () => {
  it('lists top-level names and step results, not relative names', () => {
    expect(referencedVariables('device.body.version != targetVersion')).toEqual(['device', 'targetVersion']);
    expect(referencedVariables('$steps.check.body.ok and $.flag')).toEqual(['$steps.check', 'flag']);
    expect(referencedVariables('items[price > $$.minPrice].name')).toEqual(['items', 'minPrice']);
    expect(referencedVariables('$count($error.details) > 0')).toEqual(['$error']);
    expect(referencedVariables('( $d := dev; $d.x )')).toEqual(['dev']);
    expect(referencedVariables('"literal"')).toEqual([]);
    expect(referencedVariables('$steps["check"].ok')).toEqual(['$steps.check']);
    expect(referencedVariables('$map(items, function($v) { $v.price > threshold })')).toEqual([
      'items',
      'threshold',
    ]);
    expect(referencedVariables('a.{"x": b}')).toEqual(['a']);
  });
});

describe('evaluateWhen (DESIGN.md "Rules pinned")', () => {
  it('is not taken when it reads a missing variable, and says which', async () => {
    const decision = await evaluateWhen('device.body.version != targetVersion', scope);
    expect(decision).toEqual({ taken: false, reason: 'reads missing variable "device"' });
  });

  it('names every missing variable and missing step result', async () => {
    const decision = await evaluateWhen('a = 1 or $steps.flash.ok or b', scope);
    expect(decision.taken).toBe(false);
    expect(decision.reason).toBe('reads missing variables "a", "$steps.flash", "b"');
  });

  it('does not take an edge whose condition would be true only because a variable is missing', async () => {
    // $count(undefined) is 0, so evaluating would say true: the pinned rule says false.
    const decision = await evaluateWhen('$count(device.errors) = 0', scope);
    expect(decision).toEqual({ taken: false, reason: 'reads missing variable "device"' });
  });

  it('treats $exists(x) as a presence test, not a read', async () => {
    expect(await evaluateWhen('$not($exists(device))', scope)).toEqual({ taken: true });
  });

  it('is taken when true, and not taken without a missing-variable reason when false', async () => {
    expect(await evaluateWhen('$steps.check.body.version < targetVersion', scope)).toEqual({ taken: true });
    expect(await evaluateWhen('targetVersion = 1', scope)).toEqual({
      taken: false,
      reason: 'condition is false',
    });
  });

  it('is not taken, with a reason, when it yields no value', async () => {
    const decision = await evaluateWhen('limits.enabled', scope);
    expect(decision).toEqual({ taken: false, reason: 'condition yielded no value' });
  });

  it('throws EXPRESSION_ERROR on a non-boolean result', async () => {
    const err = await expressionError(() => evaluateWhen('targetVersion', scope));
    expect(err.message).toBe('when `targetVersion` must yield true or false, got number 7');
    await expressionError(() => evaluateWhen('limits', scope));
    await expressionError(() => evaluateWhen('"yes"', scope));
  });

  it('throws EXPRESSION_ERROR when it does not parse or evaluate', async () => {
    await expressionError(() => evaluateWhen('targetVersion =', scope));
    await expressionError(() => evaluateWhen('$number("seven") = targetVersion', scope));
  });
});

describe('applyOutput / applyInput (DESIGN.md "Scopes")', () => {
  it('keeps the result only in $steps when there is no output', async () => {
    expect(await applyOutput(undefined, { a: 1 }, scope)).toEqual({});
  });

  it('writes the result to a variable named by an identifier, Unicode included', async () => {
    expect(await applyOutput('device', { version: 6 }, scope)).toEqual({ device: { version: 6 } });
    expect(await applyOutput('gerät', 1, scope)).toEqual({ gerät: 1 });
    expect(await applyOutput('結果', 2, scope)).toEqual({ 結果: 2 });
  });

  it('merges the object an expression builds from $ and $result', async () => {
    const patch = await applyOutput(
      '{"version": $result.body.version, "behind": $result.body.version < targetVersion}',
      {
        body: { version: 6 },
      },
      scope,
    );
    expect(patch).toEqual({ version: 6, behind: true });
  });

  it('throws EXPRESSION_ERROR naming the expression when it does not yield an object', async () => {
    const err = await expressionError(() =>
      applyOutput('$result.body.version', { body: { version: 6 } }, scope),
    );
    expect(err.message).toContain('`$result.body.version`');
    await expressionError(() => applyOutput('[1, 2]', null, scope));
  });

  it('gives a shallow copy of the globals by default, else the expression value', async () => {
    const input = await applyInput(undefined, scope);
    expect(input).toEqual(scope.variables);
    expect(input).not.toBe(scope.variables);
    expect(await applyInput('{"id": deviceId}', scope)).toEqual({ id: 'd-42' });
  });

  it('recognises identifiers', () => {
    for (const ok of ['device', '_x', '$x', 'gerät', '結果', 'a1']) expect(isIdentifier(ok)).toBe(true);
    for (const no of ['1a', 'a.b', 'a b', '', '{"a": 1}', '$result.x']) expect(isIdentifier(no)).toBe(false);
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
