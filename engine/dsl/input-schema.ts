/**
 * A workflow's `inputSchema` (DESIGN.md section 3): compiling it, and checking the variables an
 * instance starts with against it.
 *
 * Pure (no Node, no database), so the engine, the CLI (before it opens any file) and the
 * renderer share one answer. Ajv compiles schemas to code with `new Function`: pages under a
 * Content-Security-Policy without 'unsafe-eval' cannot compile, which is why
 * {@link validateWorkflow} compiles only where code generation is allowed; its patterns are
 * checked everywhere ({@link schemaPatternProblems}).
 *
 * Every `pattern`, `patternProperties` and `propertyNames` pattern runs on RE2 (regex.ts, linear
 * time): under JavaScript's backtracking engine `^(a|a)*$` and one 29-character value held the
 * host 11 s (issue 17).
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { EngineError } from '../errors';
import { describeValueProblem, findValueProblem, formatValuePath } from './value-limits';
import { ajvLinearRegExp, regexProblem } from './regex';
import type { Workflow } from './schema';

/** The outcome of compiling an `inputSchema`. */
export type CompiledInputSchema = { ok: true; validate: ValidateFunction } | { ok: false; reason: string };

let ajv: Ajv | undefined;

/**
 * Compiled schemas by schema object. The engine's compiled workflows are cached per workflow id
 * and keep their definition object, so this caches one validator per workflow version.
 */
const compiled = new WeakMap<object, CompiledInputSchema>();

/** A schema pattern that cannot run: where it is, as written, and why. */
export interface SchemaPatternProblem {
  /** Path inside the schema, e.g. `["properties", "code", "pattern"]`. */
  path: (string | number)[];
  /** The pattern as written. */
  pattern: string;
  /** Why: not a JavaScript regular expression, or a construct RE2 does not support. */
  reason: string;
  /** `syntax`: not a JavaScript regular expression; `unsupported`: one RE2 cannot run. */
  kind: 'syntax' | 'unsupported';
}

/** Schema keywords whose value is one subschema. */
const ONE_SCHEMA = [
  'additionalItems',
  'additionalProperties',
  'contains',
  'propertyNames',
  'not',
  'if',
  'then',
  'else',
  'items',
  'unevaluatedItems',
  'unevaluatedProperties',
] as const;
/** Schema keywords whose value is an array of subschemas. */
const SCHEMA_LISTS = ['allOf', 'anyOf', 'oneOf', 'items', 'prefixItems'] as const;
/** Schema keywords whose value maps names to subschemas. */
const SCHEMA_MAPS = ['properties', 'patternProperties', 'definitions', '$defs', 'dependencies', 'dependentSchemas'] as const;

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Why `pattern` cannot run as a JSON Schema pattern (ECMA-262 with `u`, run on RE2), or undefined. */
function patternProblem(pattern: string): Pick<SchemaPatternProblem, 'reason' | 'kind'> | undefined {
  try {
    // Construction only, never a match: JSON Schema patterns are JavaScript syntax first.
    new RegExp(pattern, 'u');
  } catch (err) {
    return { kind: 'syntax', reason: `is not a regular expression: ${err instanceof Error ? err.message : String(err)}` };
  }
  const reason = regexProblem(pattern, 'u');
  return reason === undefined ? undefined : { kind: 'unsupported', reason };
}

/**
 * Every `pattern` and `patternProperties` key of a JSON Schema that cannot run: not a JavaScript
 * regular expression, or one RE2 cannot run (a backreference, a lookaround, a repeat count over
 * 1000). Walks subschemas only (not `enum`, `const`, `default`, `examples`), without recursion.
 * Pure, so the renderer checks patterns live although it cannot compile schemas with Ajv.
 */
export function schemaPatternProblems(schema: unknown): SchemaPatternProblem[] {
  const out: SchemaPatternProblem[] = [];
  const stack: { node: unknown; path: (string | number)[] }[] = [{ node: schema, path: [] }];
  const seen = new Set<object>();
  while (stack.length > 0) {
    const { node, path } = stack.pop() as { node: unknown; path: (string | number)[] };
    if (!isObject(node) || seen.has(node)) continue;
    seen.add(node);
    const pattern = node['pattern'];
    if (typeof pattern === 'string') {
      const why = patternProblem(pattern);
      if (why !== undefined) out.push({ path: [...path, 'pattern'], pattern, ...why });
    }
    const patternProperties = node['patternProperties'];
    if (isObject(patternProperties)) {
      for (const key of Object.keys(patternProperties)) {
        const why = patternProblem(key);
        if (why !== undefined) out.push({ path: [...path, 'patternProperties', key], pattern: key, ...why });
      }
    }
    const children: { node: unknown; path: (string | number)[] }[] = [];
    for (const key of ONE_SCHEMA) if (isObject(node[key])) children.push({ node: node[key], path: [...path, key] });
    for (const key of SCHEMA_LISTS) {
      const list = node[key];
      if (Array.isArray(list)) list.forEach((item: unknown, i) => children.push({ node: item, path: [...path, key, i] }));
    }
    for (const key of SCHEMA_MAPS) {
      const map = node[key];
      if (isObject(map)) for (const [name, sub] of Object.entries(map)) children.push({ node: sub, path: [...path, key, name] });
    }
    // Pushed in reverse so problems come out in the schema's order.
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i] as { node: unknown; path: (string | number)[] });
  }
  return out;
}

/** `inputSchema.properties.code.pattern`: a schema path as messages name it (under `root`). */
export function schemaPath(path: readonly (string | number)[], root = 'inputSchema'): string {
  let out = root;
  for (const key of path) {
    out += typeof key === 'number' ? `[${key}]` : /^[A-Za-z_$][\w$]*$/u.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
  }
  return out;
}

/**
 * Compiles an `inputSchema` (JSON Schema draft-07, as Ajv reads it; unknown keywords allowed),
 * its patterns for RE2.
 *
 * Never throws: a schema Ajv refuses (`{"type":"objekt"}`, a `$ref` that does not resolve, …)
 * gives `{ ok: false, reason }` with Ajv's reason; a pattern that cannot run gives one naming it
 * (`inputSchema.properties.code.pattern "(a)\\1" uses a backreference …`). Cached per schema
 * object.
 */
export function compileInputSchema(schema: Record<string, unknown>): CompiledInputSchema {
  const cached = compiled.get(schema);
  if (cached !== undefined) return cached;
  ajv ??= new Ajv({ allErrors: true, strict: false, code: { regExp: ajvLinearRegExp } });
  let result: CompiledInputSchema;
  const bad = schemaPatternProblems(schema)[0];
  try {
    result = bad
      ? { ok: false, reason: `${schemaPath(bad.path)} ${JSON.stringify(bad.pattern)} ${bad.reason}` }
      : { ok: true, validate: ajv.compile(schema) };
  } catch (err) {
    result = { ok: false, reason: err instanceof Error ? err.message : String(err) };
  } finally {
    // Compiled functions keep working on their own; dropping the schema from Ajv's registry lets
    // two workflow versions use the same `$id`.
    try {
      ajv.removeSchema(schema);
    } catch {
      // Not registered: nothing to drop.
    }
  }
  compiled.set(schema, result);
  return result;
}

/** One failing field of the variables: `field` is a dotted path, or `(root)`. */
export interface VariableProblem {
  field: string;
  message: string;
}

function variableProblem(e: ErrorObject): VariableProblem {
  const missing = (e.params as { missingProperty?: unknown }).missingProperty;
  const base = e.instancePath === '' ? '' : e.instancePath.slice(1).replace(/\//g, '.');
  if (typeof missing === 'string') {
    // Ajv says "must have required property 'x'"; the field already names x.
    return { field: base === '' ? missing : `${base}.${missing}`, message: 'is required' };
  }
  return { field: base === '' ? '(root)' : base, message: e.message ?? 'is invalid' };
}

/**
 * The data a person attaches to an approval's decision, checked against the approval's `form`
 * (a JSON Schema), with the same compiler and messages as the variables' `inputSchema`.
 *
 * @throws EngineError INVALID_INPUT naming node `nodeId` and each failing field (`details`:
 *   `{ field, message }`), or that the form does not compile.
 */
export function checkDecisionData(form: Record<string, unknown>, data: unknown, nodeId: string): void {
  const check = compileInputSchema(form);
  if (!check.ok) {
    throw new EngineError('INVALID_INPUT', `node "${nodeId}": the approval's form is not a valid JSON Schema: ${check.reason}`);
  }
  if (check.validate(data)) return;
  const problems = (check.validate.errors ?? []).map(variableProblem);
  throw new EngineError(
    'INVALID_INPUT',
    `the decision's data does not match the form of node "${nodeId}": ${problems.map((p) => `${p.field} ${p.message}`).join('; ')}`,
    { details: problems },
  );
}

/**
 * Checks the variables an instance of `workflow` would start with: a JSON object that passes
 * the workflow's `inputSchema` (when it has one).
 *
 * The one check behind `Engine.start` and the CLI's `run`/`start`, which calls it before it
 * opens the database so a refused start writes nothing.
 *
 * @returns the variables, typed as an object.
 * @throws EngineError INVALID_VARIABLES (not an object, or failing the schema: `details` lists
 *   `{ field, message }` for each failing field); INVALID_WORKFLOW when the `inputSchema` itself
 *   does not compile (never an internal error).
 */
export function checkVariables(
  workflow: Pick<Workflow, 'name' | 'inputSchema'>,
  variables: unknown,
): Record<string, unknown> {
  if (typeof variables !== 'object' || variables === null || Array.isArray(variables)) {
    throw new EngineError('INVALID_VARIABLES', 'variables must be a JSON object');
  }
  const vars = variables as Record<string, unknown>;
  const nesting = findValueProblem(vars);
  if (nesting) {
    throw new EngineError('INVALID_VARIABLES', describeValueProblem('the variables', nesting), {
      details: [{ field: formatValuePath(nesting.path), message: describeValueProblem('the value', nesting) }],
    });
  }
  const schema = workflow.inputSchema;
  if (schema === undefined) return vars;
  const check = compileInputSchema(schema);
  if (!check.ok) {
    throw new EngineError(
      'INVALID_WORKFLOW',
      `workflow ${workflow.name}: inputSchema is not a valid JSON Schema: ${check.reason}`,
      { details: [{ code: 'INVALID_INPUT_SCHEMA', message: `workflow: inputSchema is not a valid JSON Schema: ${check.reason}`, path: ['inputSchema'] }] },
    );
  }
  if (check.validate(vars)) return vars;
  const problems = (check.validate.errors ?? []).map(variableProblem);
  throw new EngineError(
    'INVALID_VARIABLES',
    `variables do not match the inputSchema of ${workflow.name}: ${problems.map((p) => `${p.field} ${p.message}`).join('; ')}`,
    { details: problems },
  );
}
