/**
 * Live validation in the designer with the engine's own validator (`engine/dsl`, shared).
 *
 * The validator needs a {@link TypeCatalog}. For the built-in types it is the engine's own
 * (`engine/nodes/builtin-configs`: the same zod schemas with their refinements, and the script
 * syntax check), so the designer refuses what `workflow:save` refuses. A custom type is known here
 * only by its config JSON Schema from `node:types`, read back with zod's `fromJSONSchema`; what
 * that cannot carry (refinements, a plug-in's `validateConfig`, Ajv's compile of `inputSchema`) is
 * checked by the host's `workflow:validate`, which the designer store asks after each change.
 *
 * {@link checkScriptSyntax} gives the script field its line and column as the user types.
 */
import { z } from 'zod';
import type { NodeTypeInfo } from '../../../engine/api/contract';
import { validateWorkflow, type Problem, type TypeCatalog, type TypeInfo } from '../../../engine/dsl';
import { builtinConfig, scriptSyntaxError, type ScriptSyntaxError } from '../../../engine/nodes/builtin-configs';

// The renderer's CSP has no 'unsafe-eval': keep zod from probing `new Function` (a probe that a
// strict CSP reports as a violation even though zod catches it).
z.config({ jitless: true });

/** A problem the designer lists: the engine validator's {@link Problem}, as the host would name it. */
export type DesignerProblem = Omit<Problem, 'code'> & { code: string };

/** Accepts any config object: the fallback for a schema zod cannot read back. */
const ANY_CONFIG = z.record(z.string(), z.unknown());

/**
 * The validator's catalog for the `node:types` entries: a built-in type's engine entry, any other
 * type's config JSON Schema back into zod with whether its strings are templates.
 */
export function catalogFrom(types: readonly NodeTypeInfo[]): TypeCatalog {
  const map = new Map<string, TypeInfo>();
  for (const t of types) {
    // The registry refuses a custom type reusing a built-in's name: the name is the built-in.
    const builtin = builtinConfig(t.type);
    if (builtin) {
      map.set(t.type, builtin);
      continue;
    }
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

/**
 * The first syntax error of a script body, placed in the code as the user wrote it (1-based line
 * and column, the sandbox's wrapper left out), or undefined when it parses: the engine's own check
 * (engine/nodes/script-config.ts), so the field and `workflow:save` name the same place.
 */
export const checkScriptSyntax: (code: string) => ScriptSyntaxError | undefined = scriptSyntaxError;
export type { ScriptSyntaxError };

/**
 * Every problem of `definition` the engine validator finds with `catalog` (for a built-in type's
 * script, its syntax errors too: the engine's own `validateConfig`).
 */
export function designerProblems(definition: unknown, catalog: TypeCatalog): DesignerProblem[] {
  return [...validateWorkflow(definition, catalog).problems];
}
