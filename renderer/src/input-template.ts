/**
 * A template of a workflow's input variables that its `inputSchema` accepts, where a value can be
 * derived from the schema: the start panel's "fill template" and the Designer's run dialogs.
 *
 * What each keyword gives (JSON Schema draft 2020-12 / 07 as Ajv reads them on start):
 * - `const`, then `default`, then `enum` (its first member), then `examples` (its first);
 * - `type` (the first of a list that is not `null`; without one, what the other keywords imply);
 * - numbers: `minimum` (or just above `exclusiveMinimum`), else 0 or `maximum` when 0 is above
 *   it, rounded up to `multipleOf`; integers stay integers;
 * - strings: a `format`'s example (`date-time`, `date`, `time`, `email`, `uri`, `uuid`, `ipv4`,
 *   `ipv6`, `hostname`), a string that matches `pattern` when the pattern is plain enough to write
 *   one (literals, classes, `\d\w\s`, groups, alternatives, quantifiers), padded with `x` to
 *   `minLength` and never over `maxLength`;
 * - objects: every `required` property (recursively), the optional ones whose value could be
 *   derived (with `optional`), up to `minProperties`;
 * - arrays: `minItems` items of `items` (a tuple's `prefixItems` in order), distinct under
 *   `uniqueItems` where the item kind allows;
 * - `$ref` to `#/$defs/…` or `#/definitions/…`, `allOf` (merged), `anyOf`/`oneOf` (the first
 *   alternative that can be derived).
 *
 * Where no value can be derived (a pattern too rich to write a match for, contradictory bounds),
 * the template holds a placeholder text and {@link InputTemplate.toFill} names the field and why:
 * the person must fill it in, and a start left as is is refused naming that field.
 *
 * Pure (no DOM), so unit tests check its templates against the engine's own Ajv.
 */

/** A template and what it could not derive. */
export interface InputTemplate {
  /** The variables: an object when the schema describes one. */
  value: unknown;
  /** Fields the person must fill in: `path` (`a.b`, `list.0`; `(variables)` for the root) and why. */
  toFill: Array<{ path: string; why: string }>;
}

/** Options of {@link inputTemplate}. */
export interface InputTemplateOptions {
  /** Also give optional properties whose value can be derived (default true); required ones always. */
  optional?: boolean;
}

type Schema = Record<string, unknown>;

/** Deepest `$ref` chain (and nesting) followed: a recursive schema stops there. */
const MAX_DEPTH = 12;

/** A derived value, or a placeholder with why it could not be derived. */
type Derived = { ok: true; value: unknown } | { ok: false; value: unknown; why: string; listed?: true };

/**
 * The template of `schema` (a JSON Schema; anything else gives `{}`). See the module comment.
 */
export function inputTemplate(schema: unknown, options: InputTemplateOptions = {}): InputTemplate {
  if (!isSchema(schema)) return { value: {}, toFill: [] };
  const toFill: InputTemplate['toFill'] = [];
  const gen = new Generator(schema, options.optional ?? true, toFill);
  const out = gen.value(schema, [], 0);
  if (!out.ok && out.listed !== true) toFill.push({ path: '(variables)', why: out.why });
  return { value: out.value ?? {}, toFill };
}

function isSchema(v: unknown): v is Schema {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function pathText(path: readonly (string | number)[]): string {
  return path.length === 0 ? '(variables)' : path.join('.');
}

class Generator {
  constructor(
    private readonly root: Schema,
    private readonly optional: boolean,
    private readonly toFill: InputTemplate['toFill'],
  ) {}

  /** The value of `raw` at `path`; a field that cannot be derived is listed in toFill by its parent. */
  value(raw: unknown, path: (string | number)[], depth: number): Derived {
    if (raw === true || raw === undefined) return { ok: true, value: '' };
    if (raw === false) return { ok: false, value: null, why: 'the schema allows no value here' };
    if (!isSchema(raw)) return { ok: true, value: '' };
    if (depth > MAX_DEPTH) return { ok: false, value: null, why: 'the schema nests too deeply to derive a value' };
    const schema = this.resolve(raw, depth);
    if (schema === undefined) return { ok: false, value: null, why: `its $ref ${String(raw.$ref)} is not in the schema` };

    if ('const' in schema) return { ok: true, value: schema.const };
    if ('default' in schema) return { ok: true, value: schema.default };
    if (Array.isArray(schema.enum) && schema.enum.length > 0) return { ok: true, value: schema.enum[0] };
    if (Array.isArray(schema.examples) && schema.examples.length > 0) return { ok: true, value: schema.examples[0] };
    for (const key of ['anyOf', 'oneOf'] as const) {
      const alternatives = schema[key];
      if (!Array.isArray(alternatives) || alternatives.length === 0) continue;
      const rest = { ...schema };
      delete rest[key];
      let first: ReturnType<Generator['quiet']> | undefined;
      for (const alt of alternatives) {
        const merged = isSchema(alt) ? merge(rest, this.resolve(alt, depth) ?? {}) : rest;
        const tried = this.quiet(() => this.value(merged, path, depth + 1));
        if (tried.derived.ok && tried.toFill.length === 0) return tried.derived;
        first ??= tried;
      }
      if (first === undefined) return { ok: false, value: null, why: `no ${key} alternative could be derived` };
      this.toFill.push(...first.toFill);
      return first.derived;
    }

    switch (typeOf(schema)) {
      case 'null':
        return { ok: true, value: null };
      case 'boolean':
        return { ok: true, value: false };
      case 'integer':
        return numberFor(schema, true);
      case 'number':
        return numberFor(schema, false);
      case 'string':
        return stringFor(schema);
      case 'array':
        return this.arrayFor(schema, path, depth);
      case 'object':
        return this.objectFor(schema, path, depth);
      default:
        return { ok: true, value: '' };
    }
  }

  /** Runs `f` with toFill collected apart, so a failed alternative leaves nothing behind. */
  private quiet(f: () => Derived): { derived: Derived; toFill: InputTemplate['toFill'] } {
    const saved = this.toFill.splice(0);
    const derived = f();
    const found = this.toFill.splice(0);
    this.toFill.push(...saved);
    return { derived, toFill: found };
  }

  /** `schema` with its `$ref` (local only) and `allOf` folded in; undefined for a `$ref` not found. */
  private resolve(schema: Schema, depth: number): Schema | undefined {
    let out = schema;
    for (let i = 0; typeof out.$ref === 'string' && i < MAX_DEPTH - depth; i++) {
      const target = this.lookup(out.$ref as string);
      if (target === undefined) return undefined;
      const rest = { ...out };
      delete rest.$ref;
      out = merge(target, rest);
    }
    if (Array.isArray(out.allOf)) {
      const parts = out.allOf.filter(isSchema).map((p) => this.resolve(p, depth + 1) ?? {});
      const rest = { ...out };
      delete rest.allOf;
      out = parts.reduce<Schema>((acc, p) => merge(acc, p), rest);
    }
    return out;
  }

  private lookup(ref: string): Schema | undefined {
    if (ref === '#') return this.root;
    const m = /^#\/(\$defs|definitions)\/(.+)$/u.exec(ref);
    if (m === null) return undefined;
    const defs = this.root[m[1] as string];
    const name = (m[2] as string).replace(/~1/gu, '/').replace(/~0/gu, '~');
    const target = isSchema(defs) ? defs[name] : undefined;
    return isSchema(target) ? target : undefined;
  }

  private objectFor(schema: Schema, path: (string | number)[], depth: number): Derived {
    const props = isSchema(schema.properties) ? schema.properties : {};
    const required = Array.isArray(schema.required) ? schema.required.filter((r): r is string => typeof r === 'string') : [];
    const out: Record<string, unknown> = {};
    let ok = true;
    for (const key of required) {
      const d = this.value(Object.hasOwn(props, key) ? props[key] : undefined, [...path, key], depth + 1);
      out[key] = d.value;
      if (!d.ok) {
        ok = false;
        if (d.listed !== true) this.toFill.push({ path: pathText([...path, key]), why: d.why });
      }
    }
    const minProperties = typeof schema.minProperties === 'number' ? schema.minProperties : 0;
    for (const key of Object.keys(props)) {
      if (Object.hasOwn(out, key) || !(this.optional || Object.keys(out).length < minProperties)) continue;
      const tried = this.quiet(() => this.value(props[key], [...path, key], depth + 1));
      // An optional field is given only when all of it can be derived.
      if (tried.derived.ok && tried.toFill.length === 0) out[key] = tried.derived.value;
    }
    for (let i = 1; Object.keys(out).length < minProperties && schema.additionalProperties !== false && i <= minProperties; i++) {
      const key = `field${i}`;
      if (Object.hasOwn(out, key)) continue;
      const d = this.value(isSchema(schema.additionalProperties) ? schema.additionalProperties : true, [...path, key], depth + 1);
      if (d.ok) out[key] = d.value;
    }
    if (Object.keys(out).length < minProperties) return { ok: false, value: out, why: `needs at least ${minProperties} properties` };
    return ok ? { ok: true, value: out } : { ok: false, value: out, why: 'some of its fields must be filled in', listed: true };
  }

  private arrayFor(schema: Schema, path: (string | number)[], depth: number): Derived {
    const min = typeof schema.minItems === 'number' ? Math.max(0, Math.floor(schema.minItems)) : 0;
    const tuple = Array.isArray(schema.prefixItems) ? schema.prefixItems : Array.isArray(schema.items) ? (schema.items as unknown[]) : [];
    const rest = Array.isArray(schema.items) ? schema.additionalItems : schema.items;
    const out: unknown[] = [];
    let ok = true;
    for (let i = 0; i < min; i++) {
      const item = i < tuple.length ? tuple[i] : rest;
      const itemSchema = isSchema(item) ? this.resolve(item, depth + 1) : item;
      let d = this.value(itemSchema, [...path, i], depth + 1);
      if (schema.uniqueItems === true && d.ok) d = distinct(itemSchema, d, out, i);
      out.push(d.value);
      if (!d.ok) {
        ok = false;
        if (d.listed !== true) this.toFill.push({ path: pathText([...path, i]), why: d.why });
      }
    }
    return ok ? { ok: true, value: out } : { ok: false, value: out, why: 'some of its items must be filled in', listed: true };
  }
}

/** `a` and `b`'s keywords together (`required` and `properties` joined, `b` winning elsewhere). */
function merge(a: Schema, b: Schema): Schema {
  const out: Schema = { ...a, ...b };
  if (Array.isArray(a.required) || Array.isArray(b.required)) {
    out.required = [...new Set([...((a.required as unknown[]) ?? []), ...((b.required as unknown[]) ?? [])])];
  }
  if (isSchema(a.properties) || isSchema(b.properties)) {
    out.properties = { ...(isSchema(a.properties) ? a.properties : {}), ...(isSchema(b.properties) ? b.properties : {}) };
  }
  return out;
}

/** The schema's JSON type: its `type` (the first but `null` of a list), else what its keywords imply. */
function typeOf(schema: Schema): string | undefined {
  const t = schema.type;
  if (typeof t === 'string') return t;
  if (Array.isArray(t)) {
    const named = t.filter((x): x is string => typeof x === 'string');
    return named.find((x) => x !== 'null') ?? named[0];
  }
  if ('properties' in schema || 'required' in schema || 'minProperties' in schema) return 'object';
  if ('items' in schema || 'prefixItems' in schema || 'minItems' in schema) return 'array';
  if ('minLength' in schema || 'maxLength' in schema || 'pattern' in schema || 'format' in schema) return 'string';
  if ('minimum' in schema || 'maximum' in schema || 'exclusiveMinimum' in schema || 'exclusiveMaximum' in schema || 'multipleOf' in schema) return 'number';
  return undefined;
}

function num(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

/** A number schema's bounds (draft-04's boolean exclusive bounds qualify minimum / maximum). */
function bounds(schema: Schema) {
  const min = num(schema.minimum);
  const max = num(schema.maximum);
  const exMin = schema.exclusiveMinimum === true ? min : num(schema.exclusiveMinimum);
  const exMax = schema.exclusiveMaximum === true ? max : num(schema.exclusiveMaximum);
  const within = (v: number): boolean =>
    (min === undefined || v >= min) && (exMin === undefined || v > exMin) && (max === undefined || v <= max) && (exMax === undefined || v < exMax);
  return { min, max, exMin, exMax, within };
}

function numberFor(schema: Schema, integer: boolean): Derived {
  const { min, max, exMin, exMax, within: above } = bounds(schema);
  const step = num(schema.multipleOf) ?? (integer ? 1 : undefined);
  const up = (v: number): number => {
    if (step === undefined) return v;
    const n = Math.ceil(v / step - 1e-9) * step;
    return integer ? Math.round(n) : Number(n.toPrecision(15));
  };
  const candidates: number[] = [];
  const low = min !== undefined && exMin !== undefined ? Math.max(min, exMin) : (min ?? exMin);
  if (low !== undefined) {
    candidates.push(up(low));
    if (step !== undefined) candidates.push(up(low) + step);
    else candidates.push(low + 1, (low + (max ?? exMax ?? low + 2)) / 2);
  }
  candidates.push(0);
  const high = max ?? exMax;
  if (high !== undefined) {
    if (step !== undefined) candidates.push(Math.floor(high / step) * step, (Math.floor(high / step) - 1) * step);
    else candidates.push(high, high - 1);
  }
  const found = candidates.find((v) => Number.isFinite(v) && above(v) && (!integer || Number.isInteger(v)));
  if (found !== undefined) return { ok: true, value: found };
  return { ok: false, value: low ?? 0, why: 'no number meets its bounds and multipleOf' };
}

/** Examples of the formats Ajv's common formats check. */
const FORMAT_EXAMPLES: Readonly<Record<string, string>> = {
  'date-time': '2026-01-01T00:00:00Z',
  date: '2026-01-01',
  time: '00:00:00Z',
  email: 'user@example.com',
  'idn-email': 'user@example.com',
  uri: 'https://example.com/',
  'uri-reference': 'https://example.com/',
  iri: 'https://example.com/',
  url: 'https://example.com/',
  uuid: '00000000-0000-4000-8000-000000000000',
  ipv4: '127.0.0.1',
  ipv6: '::1',
  hostname: 'example.com',
  'idn-hostname': 'example.com',
  duration: 'P1D',
  regex: '.*',
};

function stringFor(schema: Schema): Derived {
  const minLength = num(schema.minLength) ?? 0;
  const maxLength = num(schema.maxLength);
  const pattern = typeof schema.pattern === 'string' ? schema.pattern : undefined;
  const format = typeof schema.format === 'string' ? schema.format : undefined;
  const fits = (s: string): boolean => {
    const n = [...s].length;
    return n >= minLength && (maxLength === undefined || n <= maxLength) && (pattern === undefined || matches(pattern, s));
  };
  const pad = (s: string): string => (minLength > [...s].length ? s + 'x'.repeat(minLength - [...s].length) : s);
  const seeds: string[] = [];
  if (format !== undefined && FORMAT_EXAMPLES[format] !== undefined) seeds.push(FORMAT_EXAMPLES[format]);
  if (pattern !== undefined) {
    for (const s of patternExamples(pattern, minLength)) seeds.push(s);
  } else seeds.push('');
  for (const seed of seeds) {
    if (fits(seed)) return { ok: true, value: seed };
    if (pattern === undefined && format === undefined && fits(pad(seed))) return { ok: true, value: pad(seed) };
  }
  if (pattern !== undefined) return { ok: false, value: `<fill in: matches ${pattern}>`, why: `must match the pattern ${pattern}` };
  if (format !== undefined && FORMAT_EXAMPLES[format] === undefined) return { ok: false, value: '', why: `must be a ${format}` };
  return { ok: false, value: pad(''), why: 'no text meets its minLength and maxLength' };
}

/** Whether `text` matches `pattern` (JSON Schema: unanchored, Unicode); false when it does not compile here. */
function matches(pattern: string, text: string): boolean {
  try {
    return new RegExp(pattern, 'u').test(text);
  } catch {
    return false;
  }
}

/** Strings `pattern` may match, shortest first, then ones near `minLength` long; empty when it is too rich to write. */
function patternExamples(pattern: string, minLength: number): string[] {
  try {
    const node = new PatternParser(pattern).parse();
    const out = [write(node, 0)];
    if (minLength > 0) {
      for (let extra = 1; extra <= minLength; extra++) out.push(write(node, extra));
    }
    return [...new Set(out)];
  } catch {
    return [];
  }
}

/** A parsed pattern: a sequence, alternatives, a repeated part, or one character's choice. */
type PatternNode =
  | { kind: 'seq'; items: PatternNode[] }
  | { kind: 'alt'; options: PatternNode[] }
  | { kind: 'repeat'; node: PatternNode; min: number; max: number }
  | { kind: 'char'; char: string }
  | { kind: 'empty' };

/** A pattern too rich for {@link PatternParser} (backreferences, lookarounds, Unicode properties). */
class TooRich extends Error {}

/**
 * Reads the plain part of JavaScript's regular expression syntax, enough to write one match:
 * literals, `.`, classes (negated ones too), `\d \w \s` and their negations, escapes, groups
 * (capturing, `(?:`, named), `|`, `* + ? {n} {n,} {n,m}` (lazy or not), `^` and `$`.
 */
class PatternParser {
  private i = 0;
  constructor(private readonly src: string) {}

  parse(): PatternNode {
    const node = this.alternatives();
    if (this.i < this.src.length) throw new TooRich(`unexpected ${this.src[this.i]}`);
    return node;
  }

  private peek(): string | undefined {
    return this.src[this.i];
  }

  private alternatives(): PatternNode {
    const options = [this.sequence()];
    while (this.peek() === '|') {
      this.i++;
      options.push(this.sequence());
    }
    return options.length === 1 ? (options[0] as PatternNode) : { kind: 'alt', options };
  }

  private sequence(): PatternNode {
    const items: PatternNode[] = [];
    for (let c = this.peek(); c !== undefined && c !== '|' && c !== ')'; c = this.peek()) {
      if (c === '^' || c === '$') {
        this.i++;
        continue;
      }
      items.push(this.quantified(this.atom()));
    }
    return { kind: 'seq', items };
  }

  private quantified(node: PatternNode): PatternNode {
    const c = this.peek();
    let min: number;
    let max: number;
    if (c === '*') [min, max] = [0, Infinity];
    else if (c === '+') [min, max] = [1, Infinity];
    else if (c === '?') [min, max] = [0, 1];
    else if (c === '{') {
      const m = /^\{(\d+)(,(\d*))?\}/u.exec(this.src.slice(this.i));
      if (m === null) return node; // a literal "{"
      min = Number(m[1]);
      max = m[2] === undefined ? min : m[3] === '' ? Infinity : Number(m[3]);
      this.i += m[0].length - 1;
    } else return node;
    this.i++;
    if (this.peek() === '?') this.i++;
    return { kind: 'repeat', node, min, max };
  }

  private atom(): PatternNode {
    const c = this.src[this.i++] as string;
    if (c === '(') {
      if (this.src.startsWith('?:', this.i)) this.i += 2;
      else if (this.src.startsWith('?<', this.i) && !/^\?<[=!]/u.test(this.src.slice(this.i))) {
        const end = this.src.indexOf('>', this.i);
        if (end < 0) throw new TooRich('unclosed group name');
        this.i = end + 1;
      } else if (this.peek() === '?') throw new TooRich('a lookaround');
      const inner = this.alternatives();
      if (this.src[this.i++] !== ')') throw new TooRich('unclosed group');
      return inner;
    }
    if (c === '[') return this.charClass();
    if (c === '.') return { kind: 'char', char: 'x' };
    if (c === '\\') return { kind: 'char', char: this.escape(false) };
    return { kind: 'char', char: c };
  }

  /** The character an escape stands for (one of its class for `\d` and the like). */
  private escape(inClass: boolean): string {
    const c = this.src[this.i++];
    if (c === undefined) throw new TooRich('a trailing backslash');
    switch (c) {
      case 'd':
        return '0';
      case 'w':
        return 'x';
      case 's':
        return ' ';
      case 'D':
      case 'W':
      case 'S':
        return c === 'S' ? 'x' : '-';
      case 'n':
        return '\n';
      case 't':
        return '\t';
      case 'r':
        return '\r';
      case 'b':
        if (inClass) return '\b';
        throw new TooRich('a word boundary');
      case 'u': {
        const m = /^(\{[0-9a-fA-F]+\}|[0-9a-fA-F]{4})/u.exec(this.src.slice(this.i));
        if (m === null) throw new TooRich('a bad \\u escape');
        this.i += m[0].length;
        return String.fromCodePoint(parseInt(m[0].replace(/[{}]/gu, ''), 16));
      }
      case 'x': {
        const hex = this.src.slice(this.i, this.i + 2);
        this.i += 2;
        return String.fromCharCode(parseInt(hex, 16));
      }
      default:
        if (/[0-9pPkcB]/u.test(c)) throw new TooRich(`\\${c}`);
        return c;
    }
  }

  private charClass(): PatternNode {
    const negated = this.peek() === '^';
    if (negated) this.i++;
    const ranges: Array<[number, number]> = [];
    let first = true;
    while (this.peek() !== ']' || first) {
      first = false;
      const c = this.src[this.i++];
      if (c === undefined) throw new TooRich('an unclosed class');
      let lo: string;
      if (c === '\\') {
        const e = this.src[this.i];
        lo = this.escape(true);
        if (e === 'd') ranges.push([48, 57]);
        else if (e === 'w') ranges.push([48, 57], [65, 90], [95, 95], [97, 122]);
        else if (e === 's') ranges.push([32, 32], [9, 13]);
        else if (e !== undefined && 'DWS'.includes(e)) throw new TooRich('a negated class escape in a class');
        if (e !== undefined && 'dws'.includes(e)) continue;
      } else lo = c;
      if (this.peek() === '-' && this.src[this.i + 1] !== ']' && this.src[this.i + 1] !== undefined) {
        this.i++;
        let hi = this.src[this.i++] as string;
        if (hi === '\\') hi = this.escape(true);
        ranges.push([lo.codePointAt(0) as number, hi.codePointAt(0) as number]);
      } else ranges.push([lo.codePointAt(0) as number, lo.codePointAt(0) as number]);
    }
    this.i++;
    const inSet = (cp: number): boolean => ranges.some(([a, b]) => cp >= a && cp <= b);
    if (!negated) {
      const preferred = [...'x0aA_-'].map((ch) => ch.codePointAt(0) as number).find(inSet);
      const cp = preferred ?? ranges[0]?.[0];
      if (cp === undefined) throw new TooRich('an empty class');
      return { kind: 'char', char: String.fromCodePoint(cp) };
    }
    const outside = [...'x0aA_-. '].find((ch) => !inSet(ch.codePointAt(0) as number));
    if (outside === undefined) throw new TooRich('a negated class that excludes every plain character');
    return { kind: 'char', char: outside };
  }
}

/** One text `node` matches: the fewest repeats, with `extra` more of the first part that may repeat. */
function write(node: PatternNode, extra: number): string {
  const budget = { extra };
  const go = (n: PatternNode): string => {
    switch (n.kind) {
      case 'empty':
        return '';
      case 'char':
        return n.char;
      case 'seq':
        return n.items.map(go).join('');
      case 'alt':
        return go(n.options[0] as PatternNode);
      case 'repeat': {
        let times = n.min;
        if (budget.extra > 0 && n.max > n.min) {
          const more = Math.min(budget.extra, n.max - n.min);
          times += more;
          budget.extra -= more;
        }
        return Array.from({ length: times }, () => go(n.node)).join('');
      }
    }
  };
  return go(node);
}

/** `d` made unlike the items before it (for `uniqueItems`), or a placeholder result when it cannot be. */
function distinct(schema: unknown, d: Derived, before: readonly unknown[], index: number): Derived {
  const seen = new Set(before.map((v) => JSON.stringify(v)));
  if (!seen.has(JSON.stringify(d.value))) return d;
  const s = isSchema(schema) ? schema : {};
  const candidates: unknown[] = [];
  if (Array.isArray(s.enum)) candidates.push(...s.enum);
  else if (typeof d.value === 'number') {
    const step = num(s.multipleOf) ?? 1;
    for (let k = 1; k <= index + 1; k++) candidates.push(d.value + k * step);
  } else if (typeof d.value === 'string' && s.pattern === undefined && s.format === undefined) {
    candidates.push(`${d.value}${index}`);
  } else if (typeof d.value === 'boolean') candidates.push(true);
  for (const c of candidates) {
    if (seen.has(JSON.stringify(c))) continue;
    if (typeof c === 'number' && !bounds(s).within(c)) continue;
    if (typeof c === 'string' && num(s.maxLength) !== undefined && [...c].length > (s.maxLength as number)) continue;
    return { ok: true, value: c };
  }
  return { ok: false, value: d.value, why: 'its items must differ (uniqueItems) and no other value could be derived' };
}
