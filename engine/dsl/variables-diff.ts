/**
 * The variables diff of a manual action (DESIGN.md section 4: "a variables diff" in history):
 * what an edit of an instance's globals changes, top-level key by key. One definition for the
 * engine, which records it in history, and the renderer, whose resume panel previews it.
 *
 * Shared with the renderer: imports nothing from Node.
 */

/** What an edit of the globals changes (top-level keys), as history records it. */
export interface VariablesDiff {
  added: Record<string, unknown>;
  removed: string[];
  changed: Record<string, { from: unknown; to: unknown }>;
}

/** The diff between two variable documents (top-level keys; values compared as JSON). */
export function diffVariables(before: Record<string, unknown>, after: Record<string, unknown>): VariablesDiff {
  const diff: VariablesDiff = { added: {}, removed: [], changed: {} };
  for (const [k, v] of Object.entries(after)) {
    // Own keys only: a variable `constructor` or `toString` is not Object.prototype's member.
    if (!Object.hasOwn(before, k)) diff.added[k] = v;
    else if (JSON.stringify(before[k]) !== JSON.stringify(v)) diff.changed[k] = { from: before[k], to: v };
  }
  for (const k of Object.keys(before)) if (!Object.hasOwn(after, k)) diff.removed.push(k);
  return diff;
}
