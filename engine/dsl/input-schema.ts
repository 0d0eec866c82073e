/**
 * A workflow's `inputSchema` (DESIGN.md section 3): compiling it, and checking the variables an
 * instance starts with against it.
 *
 * Pure (no Node, no database), so the engine, the CLI (before it opens any file) and the
 * renderer share one answer. Ajv compiles schemas to code with `new Function`: pages under a
 * Content-Security-Policy without 'unsafe-eval' cannot compile, which is why
 * {@link validateWorkflow} compiles only where code generation is allowed.
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { EngineError } from '../errors';
import type { Workflow } from './schema';

/** The outcome of compiling an `inputSchema`. */
export type CompiledInputSchema = { ok: true; validate: ValidateFunction } | { ok: false; reason: string };

let ajv: Ajv | undefined;

/**
 * Compiled schemas by schema object. The engine's compiled workflows are cached per workflow id
 * and keep their definition object, so this caches one validator per workflow version.
 */
const compiled = new WeakMap<object, CompiledInputSchema>();

/**
 * Compiles an `inputSchema` (JSON Schema draft-07, as Ajv reads it; unknown keywords allowed).
 *
 * Never throws: a schema Ajv refuses (`{"type":"objekt"}`, a `$ref` that does not resolve, …)
 * gives `{ ok: false, reason }` with Ajv's reason. Cached per schema object.
 */
export function compileInputSchema(schema: Record<string, unknown>): CompiledInputSchema {
  const cached = compiled.get(schema);
  if (cached !== undefined) return cached;
  ajv ??= new Ajv({ allErrors: true, strict: false });
  let result: CompiledInputSchema;
  try {
    result = { ok: true, validate: ajv.compile(schema) };
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
