/**
 * Node ids the designer makes: for new nodes (from the type) and for pasted copies (from the
 * original), always valid DSL ids and never one already taken.
 */
import { ID_PATTERN } from '../../../engine/dsl';

/** One character a DSL id may hold (ZWJ and VS16 outside the class, as in engine/dsl/schema.ts). */
const ID_CHAR = /^(?:[\p{L}\p{N}\p{Extended_Pictographic}\p{M}_.-]|\u200d|\ufe0f)$/u;

/** `base` made into a valid id: bad characters become `-`, at most 120 code points, never empty. */
export function sanitizeId(base: string): string {
  const cleaned = [...base]
    .map((ch) => (ID_CHAR.test(ch) ? ch : '-'))
    .slice(0, 120)
    .join('');
  return cleaned === '' || !ID_PATTERN.test(cleaned) ? 'node' : cleaned;
}

/**
 * A valid id not in `taken`: `base` itself when free, else `base-2`, `base-3`, … (a trailing
 * `-<n>` of `base` counts up rather than stacking: `check-2` → `check-3`).
 */
export function freshId(base: string, taken: ReadonlySet<string>): string {
  const clean = sanitizeId(base);
  if (!taken.has(clean)) return clean;
  const m = /^(.*)-(\d+)$/u.exec(clean);
  const stem = m?.[1] && m[1] !== '' ? m[1] : clean;
  let n = m?.[1] && m[1] !== '' ? Number(m[2]) + 1 : 2;
  for (;;) {
    const id = `${stem}-${n}`;
    if (!taken.has(id)) return id;
    n++;
  }
}

/** Why `id` cannot be a node id (not valid, or taken by another node), or undefined when it can. */
export function idProblem(id: string, taken: ReadonlySet<string>): string | undefined {
  if (!ID_PATTERN.test(id)) return 'An id is 1–128 letters, digits, emoji, "_", "-" or "." (no spaces)';
  if (taken.has(id)) return `Another node already has the id "${id}"`;
  return undefined;
}
