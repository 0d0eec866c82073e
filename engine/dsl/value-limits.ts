/**
 * The limits of every JSON value people give the engine: workflow definitions (their `config`,
 * `inputSchema`, `ui` …), start and resume variables, approval data, and node results — how deep
 * it nests, no `__proto__` key, and no number JSON cannot keep.
 *
 * Recursive code (validation, templates, export, JSON.stringify, React trees) has a stack; a
 * value nested thousands deep overflowed it as `INTERNAL: Maximum call stack size exceeded`, or
 * failed an attempt with a retryable RangeError (issue 17, item 3). Values are checked against
 * {@link MAX_NESTING_DEPTH} first, by a walk that itself uses no recursion, and refused with the
 * path where the limit is passed; a YAML alias that contains itself (a circular value) is refused
 * the same way. Everything within the limit works everywhere.
 *
 * A `__proto__` key is refused wherever a value comes in (issue 17, item 7): JSON.parse keeps it
 * as a plain key, but most code that copies an object (zod, JSONata's object constructors and
 * `$merge`, templates) assigns it, which sets the copy's prototype instead, so the key vanished
 * from some paths and stayed on others. One rule: refused, with its path. (An object whose
 * prototype such an assignment already changed is refused the same way.)
 *
 * A number that is not finite (Infinity, -Infinity, NaN) is refused the same way, with its path:
 * JSON has no such numbers, so JSON.stringify stores it as `null` and the value changed silently
 * between the check and the file (`{"n": 1e999}` parses to Infinity, passed an inputSchema
 * `{type: number}` and was stored as `{"n": null}`; a definition's `1e999` exported as null). It
 * gets in through JSON text that overflows a double, YAML's `.inf` / `.nan`, and values handed
 * over as objects (a node handler's result, structured clone over IPC).
 *
 * Pure (no Node imports): the renderer checks with it too.
 */

/** How deep a JSON value may nest: objects and arrays inside each other, the outermost counting as 1. */
export const MAX_NESTING_DEPTH = 100;

/** Where a value passes the limit, refers to itself, holds a `__proto__` key or a number JSON cannot keep. */
export interface ValueProblem {
  /**
   * `deep`: nested deeper than the limit at `path`; `circular`: `path` holds a value that
   * contains it; `prototype`: `path` is a `__proto__` key (or an object whose prototype one set);
   * `nonfinite`: `path` holds Infinity, -Infinity or NaN (`number` says which).
   */
  kind: 'deep' | 'circular' | 'prototype' | 'nonfinite';
  /** Keys from the value's root (array indexes as numbers). */
  path: (string | number)[];
  /** The number itself, for `nonfinite`. */
  number?: number;
}

/** Whether `value` is a number JSON cannot keep (JSON.stringify writes it as `null`). */
function nonFinite(value: unknown): value is number {
  return typeof value === 'number' && !Number.isFinite(value);
}

interface Frame {
  value: object;
  keys: (string | number)[];
  next: number;
  /** The key under which this value sits in its parent (undefined for the root). */
  key: string | number | undefined;
}

/** Whether `value` is neither an array nor an object with the plain (or no) prototype JSON objects have. */
function alteredPrototype(value: object): boolean {
  if (Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto !== Object.prototype && proto !== null;
}

function childKeys(value: object): (string | number)[] {
  return Array.isArray(value) ? value.map((_, i) => i) : Object.keys(value);
}

/**
 * The first place where `value` nests deeper than `maxDepth` objects and arrays, contains
 * itself, holds a `__proto__` key or a number that is not finite (the value itself included);
 * undefined when it does none of these. Iterative: safe for any depth.
 */
export function findValueProblem(value: unknown, maxDepth = MAX_NESTING_DEPTH): ValueProblem | undefined {
  if (nonFinite(value)) return { kind: 'nonfinite', path: [], number: value };
  if (typeof value !== 'object' || value === null) return undefined;
  if (alteredPrototype(value)) return { kind: 'prototype', path: [] };
  const stack: Frame[] = [{ value, keys: childKeys(value), next: 0, key: undefined }];
  const onPath = new Set<object>([value]);
  const pathOf = (extra?: string | number): (string | number)[] => {
    const path = stack.slice(1).map((f) => f.key as string | number);
    return extra === undefined ? path : [...path, extra];
  };
  while (stack.length > 0) {
    const top = stack[stack.length - 1] as Frame;
    if (top.next >= top.keys.length) {
      onPath.delete(top.value);
      stack.pop();
      continue;
    }
    const key = top.keys[top.next++] as string | number;
    if (key === '__proto__') return { kind: 'prototype', path: pathOf(key) };
    const child = (top.value as Record<string | number, unknown>)[key];
    if (nonFinite(child)) return { kind: 'nonfinite', path: pathOf(key), number: child };
    if (typeof child !== 'object' || child === null) continue;
    if (onPath.has(child)) return { kind: 'circular', path: pathOf(key) };
    if (alteredPrototype(child)) return { kind: 'prototype', path: pathOf(key) };
    if (stack.length >= maxDepth) return { kind: 'deep', path: pathOf(key) };
    onPath.add(child);
    stack.push({ value: child, keys: childKeys(child), next: 0, key });
  }
  return undefined;
}

/** The validation problem code of a {@link ValueProblem} in a workflow definition (engine/dsl/validate-problems.ts `ProblemCodes`). */
export function valueProblemCode(p: ValueProblem): 'TOO_DEEP' | 'PROTOTYPE_KEY' | 'NOT_FINITE' {
  return p.kind === 'prototype' ? 'PROTOTYPE_KEY' : p.kind === 'nonfinite' ? 'NOT_FINITE' : 'TOO_DEEP';
}

/** A path as people read it: `config.a.b[0].c`; `(the value itself)` when empty. */
export function formatValuePath(path: readonly (string | number)[]): string {
  let out = '';
  for (const k of path) out += typeof k === 'number' ? `[${k}]` : out === '' ? k : `.${k}`;
  return out === '' ? '(the value itself)' : out;
}

/** One line saying what is wrong with `what` (e.g. "variables", "the result of node \"a\""). */
export function describeValueProblem(what: string, p: ValueProblem): string {
  if (p.kind === 'deep') return `${what}: nested deeper than ${MAX_NESTING_DEPTH} levels of objects and arrays at ${formatValuePath(p.path)}`;
  if (p.kind === 'circular') return `${what}: contains itself at ${formatValuePath(p.path)} (a YAML alias inside its own anchor?)`;
  if (p.kind === 'nonfinite') {
    const overflow = Number.isNaN(p.number) ? '' : '; a literal beyond ±1.8e308, such as 1e999, overflows to it';
    return `${what}: ${formatValuePath(p.path)} is ${String(p.number)}, a number JSON cannot keep (it would be stored as null${overflow}): give a finite number`;
  }
  return `${what}: a "__proto__" key at ${formatValuePath(p.path)} is not accepted (it would be lost where the value is copied): rename it`;
}
