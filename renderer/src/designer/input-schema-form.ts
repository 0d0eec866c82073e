/**
 * The workflow's `inputSchema` as a list of fields (name, type, required; for strings also
 * `minLength` and `pattern`) the properties panel edits without JSON. Only the simple shape is
 * edited this way — an object schema whose properties each have at most one `type`; every other
 * keyword (`maxLength`, `enum`, …) is kept as it was. Anything else is left to the JSON editor. Pure.
 */

/** Types a field can be given in the list. */
export const FIELD_TYPES = ['string', 'number', 'integer', 'boolean', 'object', 'array'] as const;

/** One field of the input schema. */
export interface InputField {
  name: string;
  /** A JSON Schema type, or '' for any value. */
  type: string;
  required: boolean;
  /** A string's least length (JSON Schema `minLength`); undefined for none. */
  minLength?: number;
  /** A regular expression a string must match (JSON Schema `pattern`); undefined for none. */
  pattern?: string;
}

type Schema = Record<string, unknown>;

function isRecord(v: unknown): v is Schema {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The fields of `schema`, or undefined when its shape is not one the list can edit. */
export function readFields(schema: unknown): InputField[] | undefined {
  if (schema === undefined) return [];
  if (!isRecord(schema)) return undefined;
  if (schema['type'] !== undefined && schema['type'] !== 'object') return undefined;
  const props = schema['properties'] ?? {};
  if (!isRecord(props)) return undefined;
  const required = schema['required'] ?? [];
  if (!Array.isArray(required)) return undefined;
  const fields: InputField[] = [];
  for (const [name, p] of Object.entries(props)) {
    if (!isRecord(p)) return undefined;
    const t = p['type'];
    if (t !== undefined && typeof t !== 'string') return undefined;
    const field: InputField = { name, type: t ?? '', required: required.includes(name) };
    if (typeof p['minLength'] === 'number') field.minLength = p['minLength'];
    if (typeof p['pattern'] === 'string') field.pattern = p['pattern'];
    fields.push(field);
  }
  return fields;
}

/**
 * `schema` with its fields replaced by `fields` (keywords of kept fields stay; `minLength` and
 * `pattern` of a string field as the field says, when it has those keys); undefined when empty.
 */
export function writeFields(schema: unknown, fields: readonly InputField[], renamedFrom?: ReadonlyMap<number, string>): Schema | undefined {
  const base: Schema = isRecord(schema) ? { ...schema } : {};
  const oldProps: Schema = isRecord(base['properties']) ? base['properties'] : {};
  if (fields.length === 0) {
    const { properties: _p, required: _r, type: _t, ...rest } = base;
    return Object.keys(rest).length === 0 ? undefined : { type: 'object', ...rest };
  }
  const props: Schema = {};
  fields.forEach((f, i) => {
    const was = renamedFrom?.get(i) ?? f.name;
    const old = isRecord(oldProps[was]) ? { ...oldProps[was] } : {};
    if (f.type === '') delete old['type'];
    else old['type'] = f.type;
    // A string's own keywords follow the field when it names them (a key set to undefined
    // removes the keyword; a field without the key keeps what the schema had); other types keep
    // whatever they had.
    if (f.type === 'string') {
      if ('minLength' in f) {
        if (f.minLength === undefined) delete old['minLength'];
        else old['minLength'] = f.minLength;
      }
      if ('pattern' in f) {
        if (f.pattern === undefined || f.pattern === '') delete old['pattern'];
        else old['pattern'] = f.pattern;
      }
    }
    props[f.name] = old;
  });
  const required = fields.filter((f) => f.required).map((f) => f.name);
  const out: Schema = { ...base, type: 'object', properties: props };
  if (required.length > 0) out['required'] = required;
  else delete out['required'];
  return out;
}

/** A field name not among `fields`: `field`, `field2`, … */
export function freshFieldName(fields: readonly InputField[]): string {
  const taken = new Set(fields.map((f) => f.name));
  for (let n = 1; ; n++) {
    const name = n === 1 ? 'field' : `field${n}`;
    if (!taken.has(name)) return name;
  }
}
