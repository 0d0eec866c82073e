/**
 * What validation needs of each built-in node type — its config schema, whether its config
 * strings are templates, its extra config check (`validateConfig`) — without the types' handlers.
 *
 * The designer validates with these in the browser page (renderer/src/designer/validation.ts), so
 * a built-in's config is refused there exactly as `workflow:save` refuses it: the same zod
 * schemas with their refinements (a delay needs `durationMs` or `until`), the same script syntax
 * check. The registry builds its built-ins from the same modules; a unit test holds the two equal.
 *
 * Pure: this module and the config modules it imports use zod, acorn and the engine's error class
 * only (fenced in eslint.config.js), never the sandbox, the thread pool or Node.
 */
import type { TypeInfo } from '../dsl/validate-nodes';
import { ApprovalConfigSchema } from './approval';
import { DelayConfigSchema } from './delay';
import { EventConfigSchema, MapConfigSchema, SubworkflowConfigSchema } from './control-flow-config';
import { HttpConfigSchema } from './http-config';
import { PassConfigSchema } from './pass';
import { ScriptConfigSchema, scriptSyntaxProblems, type ScriptConfig } from './script-config';

/** A script's first syntax error placed in its own code (for the designer's script field). */
export { scriptSyntaxError, type ScriptSyntaxError } from './script-config';

/**
 * The built-in types' validation entries by type name (`pass`, `script`, `http`, `delay`,
 * `approval`, `subworkflow`, `map`, `event`), as `NodeRegistry.catalog()` gives them for the registry's built-ins.
 */
export const BUILTIN_CONFIGS: Readonly<Record<string, TypeInfo>> = Object.freeze({
  pass: { configSchema: PassConfigSchema },
  script: {
    configSchema: ScriptConfigSchema,
    templates: false,
    validateConfig: (config: unknown) => scriptSyntaxProblems((config as ScriptConfig).code),
  },
  http: { configSchema: HttpConfigSchema },
  delay: { configSchema: DelayConfigSchema },
  approval: { configSchema: ApprovalConfigSchema },
  subworkflow: { configSchema: SubworkflowConfigSchema, templates: false },
  map: { configSchema: MapConfigSchema, templates: false },
  event: { configSchema: EventConfigSchema },
});

/** The validation entry of built-in type `type`, or undefined for any other name. */
export function builtinConfig(type: string): TypeInfo | undefined {
  return Object.hasOwn(BUILTIN_CONFIGS, type) ? BUILTIN_CONFIGS[type] : undefined;
}
