/**
 * The Run dialog's variables: a starting skeleton and field hints from the workflow's
 * `inputSchema`, and a check of the typed variables against it before the host sees them (zod's
 * `fromJSONSchema`: the renderer's CSP forbids the host's Ajv code generation); and a test run's
 * pins, read from the texts typed per node. Pure.
 */
import { z } from 'zod';
import { inputTemplate } from '../input-template';

/** The top-level fields of an input schema, as `name (type)` hints; required ones marked. */
export function schemaFields(schema: unknown): string[] {
  if (typeof schema !== 'object' || schema === null) return [];
  const props = (schema as { properties?: unknown }).properties;
  if (typeof props !== 'object' || props === null) return [];
  const required = new Set(((schema as { required?: unknown }).required as string[] | undefined) ?? []);
  return Object.entries(props as Record<string, { type?: unknown }>).map(([key, s]) => `${key}${required.has(key) ? '*' : ''} (${typeof s?.type === 'string' ? s.type : 'any'})`);
}

/**
 * A starting value for the variables editor: each required property of `schema` with a value its
 * constraints accept where one can be derived (input-template.ts; a placeholder where not).
 */
export function variablesSkeleton(schema: unknown): string {
  return JSON.stringify(inputTemplate(schema, { optional: false }).value ?? {}, null, 2);
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

/** A pin's starting text for a node of `type`: the shape its handler returns. */
export function pinSample(type: string): string {
  switch (type) {
    case 'http':
      return '{ "status": 200, "headers": {}, "body": {} }';
    case 'approval':
      return '{ "approved": true }';
    default:
      return '{}';
  }
}

/**
 * The pins a test run sends: each checked node's text as JSON, or why one is not JSON (naming
 * the node).
 */
export function pinsFrom(checked: ReadonlySet<string>, texts: Readonly<Record<string, string>>): { ok: true; pins: Record<string, unknown> } | { ok: false; message: string } {
  // Keyed by node id, which may be `__proto__`: without a prototype it is sent as a key like any
  // other (and the host answers for it), never lost to a prototype setter.
  const pins = Object.create(null) as Record<string, unknown>;
  for (const id of checked) {
    try {
      pins[id] = JSON.parse(Object.hasOwn(texts, id) ? (texts[id] ?? '') : '') as unknown;
    } catch (err) {
      return { ok: false, message: `The pinned result of "${id}" is not JSON: ${err instanceof Error ? err.message : String(err)}` };
    }
  }
  return { ok: true, pins };
}
