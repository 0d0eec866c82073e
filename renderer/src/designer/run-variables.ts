/**
 * The Run dialog's variables: a starting skeleton and field hints from the workflow's
 * `inputSchema`, and a check of the typed variables against it before the host sees them (zod's
 * `fromJSONSchema`: the renderer's CSP forbids the host's Ajv code generation). Pure.
 */
import { z } from 'zod';

/** The top-level fields of an input schema, as `name (type)` hints; required ones marked. */
export function schemaFields(schema: unknown): string[] {
  if (typeof schema !== 'object' || schema === null) return [];
  const props = (schema as { properties?: unknown }).properties;
  if (typeof props !== 'object' || props === null) return [];
  const required = new Set(((schema as { required?: unknown }).required as string[] | undefined) ?? []);
  return Object.entries(props as Record<string, { type?: unknown }>).map(([key, s]) => `${key}${required.has(key) ? '*' : ''} (${typeof s?.type === 'string' ? s.type : 'any'})`);
}

/** A starting value for the variables editor: each required property of `schema` with an empty value of its type. */
export function variablesSkeleton(schema: unknown): string {
  if (typeof schema !== 'object' || schema === null) return '{}';
  const props = (schema as { properties?: unknown }).properties;
  if (typeof props !== 'object' || props === null) return '{}';
  const required = (schema as { required?: unknown }).required;
  const out: Record<string, unknown> = {};
  for (const [key, raw] of Object.entries(props as Record<string, unknown>)) {
    if (!Array.isArray(required) || !required.includes(key)) continue;
    const s = (typeof raw === 'object' && raw !== null ? raw : {}) as { type?: unknown; default?: unknown };
    if (s.default !== undefined) out[key] = s.default;
    else if (s.type === 'number' || s.type === 'integer') out[key] = 0;
    else if (s.type === 'boolean') out[key] = false;
    else if (s.type === 'object') out[key] = {};
    else if (s.type === 'array') out[key] = [];
    else out[key] = '';
  }
  return JSON.stringify(out, null, 2);
}

/** Why `variables` fail `schema` (one line per issue), or undefined when they pass or it cannot be read. */
export function checkAgainstSchema(schema: unknown, variables: Record<string, unknown>): string | undefined {
  if (typeof schema !== 'object' || schema === null) return undefined;
  let zod: z.ZodType;
  try {
    zod = z.fromJSONSchema(schema as Parameters<typeof z.fromJSONSchema>[0]);
  } catch {
    return undefined; // the host checks it on start
  }
  const r = zod.safeParse(variables);
  if (r.success) return undefined;
  return r.error.issues.map((i) => `${i.path.length > 0 ? i.path.join('.') : '(variables)'}: ${i.message}`).join('\n');
}

