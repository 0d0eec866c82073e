/**
 * The start panel's "fill template": each kind of input-schema constraint, the template checked
 * by the engine's own Ajv (compileInputSchema, what instance:start runs), and the fields it cannot
 * derive named for the person to fill in.
 */
import { describe, expect, it } from 'vitest';
import { compileInputSchema } from '../../../engine/dsl/input-schema';
import { inputTemplate } from '../../../renderer/src/input-template';

/** Whether the engine accepts `value` for `schema`, with Ajv's errors when not. */
function engineAccepts(schema: Record<string, unknown>, value: unknown): { ok: boolean; errors?: unknown } {
  const c = compileInputSchema(schema);
  if (!c.ok) throw new Error(c.reason);
  const ok = c.validate(value) as boolean;
  return ok ? { ok } : { ok, errors: c.validate.errors };
}

/** The template of `schema`, asserted to pass the engine with nothing left to fill. */
function accepted(schema: Record<string, unknown>): unknown {
  const t = inputTemplate(schema);
  expect(t.toFill).toEqual([]);
  expect(engineAccepts(schema, t.value)).toEqual({ ok: true });
  return t.value;
}

const object = (properties: Record<string, unknown>, required = Object.keys(properties)) => ({ type: 'object', required, properties });

describe('fill template', () => {
  it('enum → its first member, const → itself, default → itself', () => {
    expect(accepted(object({ mode: { type: 'string', enum: ['fast', 'safe'] }, v: { const: 3 }, d: { type: 'integer', default: 7 } }))).toEqual({
      mode: 'fast',
      v: 3,
      d: 7,
    });
  });

  it('numbers: minimum, exclusive bounds, maximum below 0, multipleOf, integers', () => {
    expect(
      accepted(
        object({
          a: { type: 'integer', minimum: 5 },
          b: { type: 'number', exclusiveMinimum: 0 },
          c: { type: 'integer', maximum: -3 },
          d: { type: 'integer', minimum: 7, multipleOf: 5 },
          e: { type: 'number', minimum: 0.5, maximum: 0.75 },
          f: { type: 'integer', exclusiveMinimum: 10, exclusiveMaximum: 12 },
        }),
      ),
    ).toEqual({ a: 5, b: 1, c: -3, d: 10, e: 0.5, f: 11 });
  });

  it('strings: minLength gives that many characters, within maxLength; formats get an example', () => {
    expect(accepted(object({ name: { type: 'string', minLength: 3, maxLength: 5 }, free: { type: 'string' }, when: { type: 'string', format: 'date-time' } }))).toEqual({
      name: 'xxx',
      free: '',
      when: '2026-01-01T00:00:00Z',
    });
  });

  it('a plain pattern is written out (with minLength too); a rich one is left to fill, and named', () => {
    const value = accepted(
      object({
        deviceId: { type: 'string', pattern: '^d-[0-9]+$' },
        sku: { type: 'string', pattern: '^[A-Z]{3}-\\d{2,4}$', minLength: 8 },
        code: { type: 'string', pattern: '^(?:red|green)_[a-z]\\w*$' },
      }),
    );
    expect(value).toEqual({ deviceId: 'd-0', sku: 'AAA-0000', code: 'red_x' });
    // given a pattern with Unicode classes: no value is derived
    const schema = object({ name: { type: 'string', pattern: '^\\p{Lu}\\p{Ll}+$' }, ok: { type: 'integer', minimum: 1 } });
    const t = inputTemplate(schema);
    expect(t.toFill).toEqual([{ path: 'name', why: 'must match the pattern ^\\p{Lu}\\p{Ll}+$' }]);
    expect(t.value).toEqual({ name: '<fill in: matches ^\\p{Lu}\\p{Ll}+$>', ok: 1 });
    // and the engine refuses it there, and only there, until it is filled
    const refused = engineAccepts(schema, t.value);
    expect(refused.ok).toBe(false);
    expect(refused.errors).toEqual([expect.objectContaining({ instancePath: '/name', keyword: 'pattern' })]);
    expect(engineAccepts(schema, { ...(t.value as object), name: 'Ada' })).toEqual({ ok: true });
  });

  it('required nested objects, recursively; optional fields only when all of them derive', () => {
    const schema = object(
      {
        device: object({ id: { type: 'string', minLength: 2 }, site: object({ region: { enum: ['eu', 'us'] } }) }),
        note: { type: 'string', pattern: '\\bx\\b' },
        retries: { type: 'integer', minimum: 1 },
      },
      ['device'],
    );
    expect(accepted(schema)).toEqual({ device: { id: 'xx', site: { region: 'eu' } }, retries: 1 });
    expect(inputTemplate(schema, { optional: false }).value).toEqual({ device: { id: 'xx', site: { region: 'eu' } } });
  });

  it('arrays with minItems, of objects and of unique items', () => {
    expect(
      accepted(
        object({
          tags: { type: 'array', minItems: 2, items: { type: 'string', minLength: 1 } },
          ids: { type: 'array', minItems: 3, uniqueItems: true, items: { type: 'integer', minimum: 1 } },
          colours: { type: 'array', minItems: 2, uniqueItems: true, items: { enum: ['red', 'green'] } },
          points: { type: 'array', minItems: 1, items: object({ x: { type: 'number' } }) },
          empty: { type: 'array' },
        }),
      ),
    ).toEqual({ tags: ['x', 'x'], ids: [1, 2, 3], colours: ['red', 'green'], points: [{ x: 0 }], empty: [] });
  });

  it('$ref to definitions, allOf merged, anyOf/oneOf the first alternative that derives, nullable types', () => {
    const schema = {
      type: 'object',
      definitions: { port: { type: 'integer', minimum: 1024, maximum: 65535 } },
      allOf: [{ required: ['port'], properties: { port: { $ref: '#/definitions/port' } } }, { required: ['host'], properties: { host: { type: 'string', format: 'hostname' } } }],
      properties: {
        target: { anyOf: [{ type: 'string', pattern: '^\\p{Lu}$' }, { type: 'integer', minimum: 2 }] },
        maybe: { type: ['null', 'string'], minLength: 1 },
      },
      required: ['target', 'maybe'],
    };
    expect(accepted(schema)).toEqual({ port: 1024, host: 'example.com', target: 2, maybe: 'x' });
  });

  it('a nested field that cannot be derived is named by its path', () => {
    const t = inputTemplate(object({ order: object({ lines: { type: 'array', minItems: 1, items: object({ sku: { type: 'string', pattern: '\\p{Lu}' } }) } }) }));
    expect(t.toFill).toEqual([{ path: 'order.lines.0.sku', why: 'must match the pattern \\p{Lu}' }]);
  });

  it('no schema, or one without properties, gives {}', () => {
    expect(inputTemplate(undefined)).toEqual({ value: {}, toFill: [] });
    expect(inputTemplate({ type: 'object' })).toEqual({ value: {}, toFill: [] });
  });
});
