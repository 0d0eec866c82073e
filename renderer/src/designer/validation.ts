/**
 * Live validation in the designer with the engine's own validator (`engine/dsl`, shared).
 *
 * The validator needs a {@link TypeCatalog} of zod config schemas; the renderer has each type's
 * config JSON Schema from `node:types`, so the catalog is rebuilt from those with zod's
 * `fromJSONSchema`. Refinements JSON Schema cannot carry are checked only by the host when
 * saving (`workflow:save` runs the full validation, and its problems are shown too).
 *
 * On top of the engine's problems the designer reports script syntax errors (the engine finds them
 * only when the script runs), parsed with acorn exactly as the engine wraps the code.
 */
import { parse as parseJs } from 'acorn';
import { z } from 'zod';
import type { NodeTypeInfo } from '../../../engine/api/contract';
import { validateWorkflow, type Problem, type TypeCatalog, type TypeInfo } from '../../../engine/dsl';

// The renderer's CSP has no 'unsafe-eval': keep zod from probing `new Function` (a probe that a
// strict CSP reports as a violation even though zod catches it).
z.config({ jitless: true });

/** A problem the designer adds to the engine's: a script that does not parse. */
export const SCRIPT_SYNTAX = 'SCRIPT_SYNTAX';

/** A designer problem: an engine {@link Problem}, or a script syntax error (code {@link SCRIPT_SYNTAX}). */
export type DesignerProblem = Omit<Problem, 'code'> & { code: Problem['code'] | typeof SCRIPT_SYNTAX };

/** Accepts any config object: the fallback for a schema zod cannot read back. */
const ANY_CONFIG = z.record(z.string(), z.unknown());

/**
 * The validator's catalog built from `node:types` entries: each type's config JSON Schema back
 * into zod, and whether its strings are templates.
 */
export function catalogFrom(types: readonly NodeTypeInfo[]): TypeCatalog {
  const map = new Map<string, TypeInfo>();
  for (const t of types) {
    let configSchema: z.ZodType;
    try {
      configSchema = z.fromJSONSchema(t.configJsonSchema as Parameters<typeof z.fromJSONSchema>[0]);
    } catch {
      configSchema = ANY_CONFIG;
    }
    map.set(t.type, { configSchema, templates: t.templates ?? t.type !== 'script' });
  }
  return (type) => map.get(type);
}

/** Where a script's syntax error is: 1-based line and column within the script, and why. */
export interface ScriptSyntaxError {
  message: string;
  line: number;
  column: number;
}

/** The wrapper the engine compiles a script in (engine/nodes/script.ts). */
const PREFIX = '(function (input, variables, steps) {';

/** The first syntax error of a script body, or undefined when it parses. */
export function checkScriptSyntax(code: string): ScriptSyntaxError | undefined {
  try {
    parseJs(`${PREFIX}${code}\n})`, { ecmaVersion: 'latest', sourceType: 'script' });
    return undefined;
  } catch (error) {
    const e = error as { message?: string; loc?: { line: number; column: number } };
    const line = e.loc?.line ?? 1;
    const column = (e.loc?.column ?? 0) - (line === 1 ? PREFIX.length : 0) + 1;
    const message = (e.message ?? String(error)).replace(/\s*\(\d+:\d+\)$/u, '');
    return { message, line, column: Math.max(1, column) };
  }
}

function scriptProblems(definition: unknown, out: DesignerProblem[]): void {
  const nodes = (definition as { nodes?: unknown }).nodes;
  if (!Array.isArray(nodes)) return;
  nodes.forEach((raw: unknown, index) => {
    if (typeof raw !== 'object' || raw === null) return;
    const node = raw as { id?: unknown; type?: unknown; config?: { code?: unknown }; compensate?: { type?: unknown; config?: { code?: unknown } } };
    const id = typeof node.id === 'string' ? node.id : undefined;
    const check = (holder: typeof node | typeof node.compensate, path: (string | number)[], field: string): void => {
      if (holder?.type !== 'script' || typeof holder.config?.code !== 'string') return;
      const err = checkScriptSyntax(holder.config.code);
      if (!err) return;
      const p: DesignerProblem = {
        code: SCRIPT_SYNTAX,
        message: `${id === undefined ? `nodes[${index}]` : `node ${JSON.stringify(id)}`}: ${field} has a syntax error at line ${err.line}, column ${err.column}: ${err.message}`,
        path: [...path, 'config', 'code'],
      };
      if (id !== undefined) p.nodeId = id;
      out.push(p);
    };
    check(node, ['nodes', index], 'config.code');
    check(node.compensate, ['nodes', index, 'compensate'], 'compensate.config.code');
  });
}

/** Every problem of `definition`: the engine validator's, then script syntax errors. */
export function designerProblems(definition: unknown, catalog: TypeCatalog): DesignerProblem[] {
  const r = validateWorkflow(definition, catalog);
  const out: DesignerProblem[] = [...r.problems];
  scriptProblems(definition, out);
  return out;
}
