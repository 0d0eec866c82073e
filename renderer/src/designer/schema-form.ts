/**
 * A node type's config JSON Schema (from `node:types`) as form fields: what input each property
 * gets in the properties panel. Pure.
 *
 * - `string` → text (a code editor for `code`, a select for `enum`);
 * - `integer` / `number` → number;
 * - `boolean` → checkbox;
 * - a string-or-number union (`delay.until`) → text that stores digits as a number;
 * - anything else (objects, arrays, open values) → a JSON editor.
 */

/** The input a config field gets. */
export type FieldKind = 'text' | 'code' | 'number' | 'integer' | 'boolean' | 'enum' | 'text-or-number' | 'json';

/** One config field of a form. */
export interface FieldSpec {
  name: string;
  kind: FieldKind;
  required: boolean;
  description?: string;
  enumValues?: string[];
  default?: unknown;
  minimum?: number;
  maximum?: number;
}

type Schema = Record<string, unknown>;

function isRecord(v: unknown): v is Schema {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function types(s: Schema): string[] {
  const t = s['type'];
  if (typeof t === 'string') return [t];
  if (Array.isArray(t)) return t.filter((x): x is string => typeof x === 'string');
  const anyOf = s['anyOf'] ?? s['oneOf'];
  if (Array.isArray(anyOf)) return anyOf.flatMap((x) => (isRecord(x) ? types(x) : []));
  return [];
}

function kindOf(name: string, s: Schema): FieldKind {
  const enumValues = s['enum'];
  if (Array.isArray(enumValues) && enumValues.every((v) => typeof v === 'string')) return 'enum';
  const t = [...new Set(types(s))];
  if (t.length === 1) {
    switch (t[0]) {
      case 'string':
        return name === 'code' || s['contentMediaType'] === 'text/javascript' ? 'code' : 'text';
      case 'integer':
        return 'integer';
      case 'number':
        return 'number';
      case 'boolean':
        return 'boolean';
      default:
        return 'json';
    }
  }
  if (t.length === 2 && t.includes('string') && (t.includes('integer') || t.includes('number'))) return 'text-or-number';
  return 'json';
}

/** The fields of a config schema, in its property order; [] for a schema without properties. */
export function configFields(schema: unknown): FieldSpec[] {
  if (!isRecord(schema) || !isRecord(schema['properties'])) return [];
  const required = new Set(Array.isArray(schema['required']) ? schema['required'].filter((r): r is string => typeof r === 'string') : []);
  return Object.entries(schema['properties']).map(([name, raw]) => {
    const s = isRecord(raw) ? raw : {};
    const field: FieldSpec = { name, kind: kindOf(name, s), required: required.has(name) };
    if (typeof s['description'] === 'string') field.description = s['description'];
    if (field.kind === 'enum') field.enumValues = (s['enum'] as string[]).slice();
    if (s['default'] !== undefined) field.default = s['default'];
    if (typeof s['minimum'] === 'number') field.minimum = s['minimum'];
    if (typeof s['maximum'] === 'number') field.maximum = s['maximum'];
    return field;
  });
}

/** Whether a schema lets config hold keys beyond its properties (then a raw JSON editor is offered). */
export function allowsExtraKeys(schema: unknown): boolean {
  return isRecord(schema) && schema['additionalProperties'] !== false;
}

/**
 * The value a text-or-number input stores: digits only (optionally signed) become a number,
 * anything else stays text, '' is absent.
 */
export function textOrNumber(text: string): string | number | undefined {
  if (text.trim() === '') return undefined;
  return /^-?\d+$/u.test(text.trim()) ? Number(text.trim()) : text;
}
