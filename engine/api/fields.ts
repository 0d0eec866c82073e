/**
 * The field building blocks of the API contract: the size limits ({@link LIMITS}, re-exported by
 * contract.ts) and the zod fields that channel inputs and entity schemas share (names, row ids,
 * versions, epoch times, JSON values under a size limit, workflow definitions in and out).
 *
 * Imported by the renderer through contract.ts: zod and type-only imports from engine/dsl/schema
 * only, never Node or engine runtime code (the lint fence of contract.ts covers this file).
 */
import { z } from 'zod';
import type { Workflow, WorkflowInput } from '../dsl/schema';
import { describeValueProblem, findValueProblem } from '../dsl/value-limits';
import { CONTROL_CHARACTERS, unstorableText } from '../vocabulary';

/**
 * Size limits enforced by the input schemas, so a huge string is refused with its field named
 * before any handler runs. Lengths are UTF-16 code units; JSON sizes are `JSON.stringify` lengths.
 */
export const LIMITS = {
  /** Workflow names, actors, business keys and other identifiers. */
  id: 200,
  /** Node ids (the DSL allows 1–128). */
  nodeId: 128,
  /** Search text, comments, free text. */
  text: 10_000,
  /** File names given with an import. */
  fileName: 260,
  /** A workflow definition as JSON, or an imported file's text: 5 MiB. */
  definitionBytes: 5 * 1024 * 1024,
  /** Variables, results and approval data as JSON: 5 MiB (the engine applies its own, lower limit). */
  valueBytes: 5 * 1024 * 1024,
  /** Most statuses one list filter may name. */
  statuses: 20,
  /** Largest list page. */
  pageSize: 1000,
  /** Most instances one bulk action touches (a larger set is refused: narrow the filter). */
  bulk: 10_000,
  /** Most time buckets one metrics series holds. */
  seriesBuckets: 1440,
} as const;

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

function jsonLength(v: unknown): number {
  try {
    return JSON.stringify(v)?.length ?? 0;
  } catch {
    return Number.POSITIVE_INFINITY;
  }
}

/**
 * The refinement of a JSON field: nested at most MAX_NESTING_DEPTH deep (checked first, without
 * recursion: a deeper value would overflow the stack of what reads it next), and at most `max`
 * characters once serialized.
 */
const jsonWithin = (max: number) => (v: unknown, ctx: z.RefinementCtx) => {
  const nesting = findValueProblem(v);
  if (nesting) {
    ctx.addIssue({ code: 'custom', message: describeValueProblem('is not accepted', nesting) });
    return;
  }
  const n = jsonLength(v);
  if (n > max)
    ctx.addIssue({
      code: 'custom',
      message: `is ${n === Number.POSITIVE_INFINITY ? 'not JSON' : `${n} characters of JSON`}, above the limit of ${max}`,
    });
};

/** A JSON value at most `max` characters long once serialized (and nested within the limit). */
export const jsonValue = (max: number) => z.unknown().superRefine(jsonWithin(max));

/** A JSON object at most `max` characters long once serialized (and nested within the limit). */
export const jsonObject = (max: number) => z.record(z.string(), z.unknown()).superRefine(jsonWithin(max));

/** Text of `min` to `max` characters that both backends store and compare as given (no NUL, no lone surrogate: {@link unstorableText}). */
export const storableText = (min: number, max: number) =>
  z
    .string()
    .min(min)
    .max(max)
    .superRefine((s, ctx) => {
      const why = unstorableText(s);
      if (why) ctx.addIssue({ code: 'custom', message: why });
    });

/** A business key: 1 to {@link LIMITS}.id characters, stored as given (other control characters are kept, and printed escaped). */
export const businessKey = storableText(1, LIMITS.id);

/** A string without control characters (names, actors, event names and keys: they are printed as they are). */
export const label = (min: number, max: number) =>
  z
    .string()
    .min(min)
    .max(max)
    .refine((s) => !CONTROL_CHARACTERS.test(s), 'must not hold control characters (tabs, newlines, escapes, line separators, direction overrides)')
    .refine((s) => min === 0 || s.trim() !== '', 'must not be blank');

/** A workflow name (or another identifier): 1 to {@link LIMITS}.id characters, no control characters. */
export const name = label(1, LIMITS.id);
/** Who takes a manual action, recorded in history; optional; no control characters. */
export const actor = label(1, LIMITS.id).optional();
/** A node id: 1 to {@link LIMITS}.nodeId characters, no control characters. */
export const nodeId = label(1, LIMITS.nodeId);
/** A row id (instance, history event): a positive safe integer. */
export const rowId = z.number().int().min(1).max(Number.MAX_SAFE_INTEGER);
/** A workflow version: a positive integer. */
export const version = z.number().int().min(1).max(1_000_000_000);
/** A time in epoch ms, within what a `Date` can hold. */
export const epochMs = z.number().int().min(0).max(8_640_000_000_000_000);
/** The input of a channel without arguments: `{}`, or nothing. */
export const nothing = z.strictObject({}).default({});

/**
 * A workflow definition going in: any JSON object up to 5 MiB (a `WorkflowInput` fits); the
 * engine's validator, not this schema, names its problems, so all of them come back at once.
 */
export const definitionIn = jsonObject(LIMITS.definitionBytes);
/** A saved workflow definition coming out (DSL format 1, as validated by the engine). */
export const definitionOut = z.custom<Workflow>(isRecord, 'must be a workflow definition object');
/** An exported or imported definition (DSL format 1 JSON, `ui` kept). */
export const definitionExport = z.custom<WorkflowInput>(isRecord, 'must be a workflow definition object');
