/**
 * Variables diffs for the resume preview: what an edit changes, top-level key by key. The diff
 * itself is the engine's own (engine/dsl/variables-diff.ts, the shape history records); this
 * module adds what the preview needs around it.
 */
import type { VariablesDiff } from '../../../engine/dsl/variables-diff';

export { diffVariables, type VariablesDiff } from '../../../engine/dsl/variables-diff';

/** Whether a diff changes nothing. */
export function isEmptyDiff(diff: VariablesDiff | undefined): boolean {
  return (
    diff === undefined ||
    (Object.keys(diff.added).length === 0 &&
      diff.removed.length === 0 &&
      Object.keys(diff.changed).length === 0)
  );
}

/** A diff read back from history data (anything), or undefined when it is not one. */
export function asDiff(value: unknown): VariablesDiff | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const d = value as Partial<VariablesDiff>;
  if (
    typeof d.added !== 'object' ||
    d.added === null ||
    !Array.isArray(d.removed) ||
    typeof d.changed !== 'object' ||
    d.changed === null
  )
    return undefined;
  return { added: d.added, removed: d.removed.map(String), changed: d.changed };
}

/** Parses a JSON object typed by a person: the object, or a message saying what is wrong. */
export function parseJsonObject(
  text: string,
): { ok: true; value: Record<string, unknown> } | { ok: false; message: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return {
      ok: false,
      message: `Not valid JSON: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return { ok: false, message: 'Must be a JSON object, e.g. {"note": "fixed"}' };
  return { ok: true, value: value as Record<string, unknown> };
}

/** Parses any JSON value typed by a person (empty means none). */
export function parseJsonValue(text: string): { ok: true; value: unknown } | { ok: false; message: string } {
  if (text.trim() === '') return { ok: true, value: undefined };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (error) {
    return {
      ok: false,
      message: `Not valid JSON: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
}
