/**
 * Time travel's record (issue 14, seed v3): what an instance's state became with each committed
 * transition, stored as a compact patch per transaction and instance, so that the state after any
 * history entry is rebuilt by folding the patches up to it.
 *
 * The state of an instance ({@link StateDoc}) is its status and instance fields, its global
 * variables, and every node's state (status, attempts, result, error, wait). A write transaction
 * that changes an instance records one {@link StatePatch} (table `history_state`): the top-level
 * variable keys that changed, the instance fields that changed, and per node the fields that
 * changed — never whole copies. The patch is keyed by the FIRST history entry the transaction
 * appended for that instance, so every entry of one transaction stands at the state that
 * transaction committed (no reader ever saw a state between two entries of one transaction). A
 * transaction that changes an instance without appending any history entry for it (a child's
 * progress counted in its parent's wait) records its patch unkeyed; the instance's next entry
 * claims it, so the change shows from that entry on.
 *
 * {@link trackStates} wraps a transaction's queries: before the first change of an instance it
 * reads the instance's state, and at the end of the transaction it reads it again and records the
 * difference. Backends call it in `write` (engine/db/sqlite-storage.ts, engine/db/postgres/storage.ts),
 * so every transition on every backend is recorded without any transition knowing.
 */
import type { WriteQueries } from './port';
import type { HistoryQueries, InstanceQueries, NodeQueries } from './queries';

/**
 * One record of fields (instance fields, or one node's). A field whose value is null is absent
 * (so a new node costs only its non-null fields), except a node's `output`, where null is a result.
 */
export type FieldDoc = Record<string, unknown>;

/**
 * An instance's state as time travel rebuilds it.
 *
 * - `instance`: `status`, `version`, `error`, `suspension`, `endStatus`, `pausedAt`, `startedAt`,
 *   `endedAt` (epoch ms), `held` (1 while waiting for a concurrency slot); null fields absent.
 * - `variables`: the globals.
 * - `nodes`: by node id, `status`, `attempt`, `attemptLimit`, `pendingIn`, `takenIn`, `output`
 *   (absent while none was recorded), `error`, `wait`, `completedSeq`, `startedAt`, `endedAt`.
 */
export interface StateDoc {
  instance: FieldDoc;
  variables: Record<string, unknown>;
  nodes: Record<string, FieldDoc>;
}

/** The change of one record: `s` sets keys (to these values), `d` deletes keys. */
export interface FieldDiff {
  s?: Record<string, unknown>;
  d?: string[];
}

/** What one transaction changed of an instance's {@link StateDoc}: instance fields, variables, nodes. */
export interface StatePatch {
  i?: FieldDiff;
  v?: FieldDiff;
  n?: Record<string, FieldDiff>;
}

/** The state of an instance that does not exist yet. */
export function emptyState(): StateDoc {
  return { instance: {}, variables: {}, nodes: {} };
}

const same = (a: unknown, b: unknown): boolean => a === b || JSON.stringify(a) === JSON.stringify(b);

/** The change from `before` to `after` (top-level keys, values compared as JSON), or undefined when none. */
export function diffFields(before: Record<string, unknown>, after: Record<string, unknown>): FieldDiff | undefined {
  const s: Record<string, unknown> = {};
  const d: string[] = [];
  for (const [k, v] of Object.entries(after)) if (!(k in before) || !same(before[k], v)) s[k] = v;
  for (const k of Object.keys(before)) if (!(k in after)) d.push(k);
  const hasSet = Object.keys(s).length > 0;
  if (!hasSet && d.length === 0) return undefined;
  return { ...(hasSet ? { s } : {}), ...(d.length > 0 ? { d } : {}) };
}

/** Applies a {@link FieldDiff} to a copy of `doc`. */
export function applyFields(doc: Record<string, unknown>, diff: FieldDiff | undefined): Record<string, unknown> {
  if (!diff) return doc;
  const out = { ...doc };
  for (const k of diff.d ?? []) delete out[k];
  for (const [k, v] of Object.entries(diff.s ?? {})) out[k] = v;
  return out;
}

/** The patch from `before` to `after`, or undefined when the state did not change. */
export function diffState(before: StateDoc, after: StateDoc): StatePatch | undefined {
  const patch: StatePatch = {};
  const i = diffFields(before.instance, after.instance);
  if (i) patch.i = i;
  const v = diffFields(before.variables, after.variables);
  if (v) patch.v = v;
  const n: Record<string, FieldDiff> = {};
  for (const [id, node] of Object.entries(after.nodes)) {
    const d = diffFields(before.nodes[id] ?? {}, node);
    if (d) n[id] = d;
  }
  if (Object.keys(n).length > 0) patch.n = n;
  return patch.i || patch.v || patch.n ? patch : undefined;
}

/** Applies a {@link StatePatch} to a copy of `doc`. */
export function applyState(doc: StateDoc, patch: StatePatch): StateDoc {
  const nodes = { ...doc.nodes };
  for (const [id, d] of Object.entries(patch.n ?? {})) nodes[id] = applyFields(nodes[id] ?? {}, d);
  return { instance: applyFields(doc.instance, patch.i), variables: applyFields(doc.variables, patch.v), nodes };
}

/** The state after folding `patches` (oldest first) over the empty state. */
export function foldStates(patches: Iterable<StatePatch>): StateDoc {
  let doc = emptyState();
  for (const p of patches) doc = applyState(doc, p);
  return doc;
}

/** Time travel's queries inside a write transaction (table `history_state`). */
export interface StateQueries {
  /**
   * The instance's state now, inside this transaction (PostgreSQL: under the instance's lock), or
   * undefined when it does not exist.
   */
  snapshot(instanceId: number): StateDoc | undefined;
  /**
   * Records a transaction's patch of an instance, keyed by `historyId` (the first entry the
   * transaction appended for it), or unkeyed (`historyId` null) when it appended none. A keyed
   * record first claims the instance's unkeyed ones (they take the same key: they happened after
   * the entry before, and show from this one); without `patch` it only claims.
   */
  record(p: { instanceId: number; historyId: number | null; patch?: StatePatch }): void;
}

/** Methods of the instance and node families that change nothing (every other one may change an instance's state). */
const READS: ReadonlySet<string> = new Set<keyof InstanceQueries | keyof NodeQueries>([
  'get',
  'head',
  'variables',
  'lockConcurrency',
  'countAdmitted',
  'oldestHeld',
  'all',
  'open',
  'openCounts',
  'results',
  'compensable',
  'otherIncidents',
]);

/** The instance a call of the instance or node family names: its first argument, or that argument's `instanceId` or `id`. */
function instanceOf(args: unknown[]): number | undefined {
  const a = args[0];
  if (typeof a === 'number') return a;
  if (typeof a === 'object' && a !== null) {
    const o = a as { instanceId?: unknown; id?: unknown };
    if (typeof o.instanceId === 'number') return o.instanceId;
    if (typeof o.id === 'number') return o.id;
  }
  return undefined;
}

/** A transaction's queries with the state of every instance it changes tracked (see the module doc). */
export interface StateTracking {
  /** The queries to hand the transaction's function. */
  readonly queries: WriteQueries;
  /** Records the patch of every instance the transaction changed; call last, inside the transaction. */
  finish(): void;
}

/**
 * Wraps `q` so that every change of an instance's state through `q.instances` and `q.nodes` is
 * recorded by `finish` (see the module doc), through `q.states`.
 */
export function trackStates(q: WriteQueries): StateTracking {
  const states = q.states;
  /** Instances changed: the state before the first change (undefined: created in this transaction). */
  const before = new Map<number, StateDoc | undefined>();
  /** The first history entry appended per instance. */
  const firstEntry = new Map<number, number>();
  const touch = (id: number | undefined): void => {
    if (id !== undefined && !before.has(id)) before.set(id, states.snapshot(id));
  };
  const wrap = <F extends object>(family: F, created?: string): F =>
    new Proxy(family, {
      get(target, key, receiver) {
        const v = Reflect.get(target, key, receiver) as unknown;
        if (typeof v !== 'function' || typeof key !== 'string' || READS.has(key)) return v;
        const fn = v as (...args: unknown[]) => unknown;
        return (...args: unknown[]) => {
          if (key === created) {
            const id = fn.apply(target, args);
            if (typeof id === 'number' && !before.has(id)) before.set(id, undefined);
            return id;
          }
          touch(instanceOf(args));
          return fn.apply(target, args);
        };
      },
    });
  const history: HistoryQueries = {
    ...q.history,
    append: (p) => {
      const id = q.history.append(p);
      if (p.instanceId !== null && !firstEntry.has(p.instanceId)) firstEntry.set(p.instanceId, id);
      return id;
    },
    deadLetter: (p) => q.history.deadLetter(p),
  };
  const queries: WriteQueries = { ...q, instances: wrap(q.instances, 'insert'), nodes: wrap(q.nodes), history };
  return {
    queries,
    finish() {
      for (const [id, was] of before) {
        const now = states.snapshot(id);
        if (!now) continue; // deleted in this transaction
        const patch = diffState(was ?? emptyState(), now);
        const historyId = firstEntry.get(id) ?? null;
        if (patch || historyId !== null) states.record({ instanceId: id, historyId, ...(patch ? { patch } : {}) });
      }
      // Entries of instances this transaction did not change still claim earlier unkeyed changes.
      for (const [id, historyId] of firstEntry) if (!before.has(id)) states.record({ instanceId: id, historyId });
    },
  };
}
