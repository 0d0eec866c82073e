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
 * transaction that changes an instance without appending any history entry for it (a claim
 * starting an attempt, a child's progress counted in its parent's wait) leaves its patch
 * pending (key 0), composed with any pending one; the instance's next entry takes it over,
 * composed with its own, so the change shows from that entry on and costs no row of its own.
 *
 * {@link trackStates} wraps a transaction's queries: before the first change of an instance it
 * takes the instance's state (kept from this connection's last transaction, or read), applies to
 * a copy what each write does (engine/store/state-effects.ts), and at the end of the transaction
 * records the difference. Backends call it in `write` (engine/db/sqlite-storage.ts,
 * engine/db/postgres/storage.ts), so every transition on every backend is recorded without any
 * transition knowing.
 */
import { isDeepStrictEqual } from 'node:util';
import { EngineError } from '../errors';
import { TERMINAL_STATUSES } from '../vocabulary';
import type { WriteQueries } from './port';
import type { HistoryQueries, InstanceQueries, NodeQueries, RetentionQueries } from './queries';

/**
 * One record of fields (an instance's, or one node's), keyed compactly (see {@link StateDoc}). A
 * field that is null, or a counter that is 0, is absent: a new node costs only what it has.
 */
export type FieldDoc = Record<string, unknown>;

/**
 * An instance's state as time travel records it, compact: one-letter keys, times in ms since
 * the instance was created.
 *
 * - `instance`: `s` status (one letter, {@link encodeStatus}), `e` error, `u` suspension, `x` endStatus, `p` pausedAt, `b` startedAt,
 *   `f` endedAt, `h` held (1 while waiting for a concurrency slot).
 * - `variables`: the globals.
 * - `nodes`: by node id, `s` status (one letter), `a` attempt, `l` attemptLimit, `i` pendingIn, `t` takenIn,
 *   `o` output boxed as `[value]` (absent while none was recorded: a null result is `[null]`),
 *   `e` error, `w` wait, `q` completedSeq, `b` startedAt, `f` endedAt.
 */
export interface StateDoc {
  instance: FieldDoc;
  variables: Record<string, unknown>;
  nodes: Record<string, FieldDoc>;
}

/**
 * What one transaction changed of an instance's {@link StateDoc} (a JSON merge patch, RFC 7386,
 * one level deep): `i` instance fields and `n` node fields set to a value, or null for removed;
 * `v` variables by top-level key: `[value]` set (boxed, so that null stays a value), null
 * removed, or a node id: the value is that node's output as this patch sets it (a variable
 * written from a result is not stored twice).
 */
export interface StatePatch {
  /**
   * 1: the variables begin as the instance's start variables (its stored input, which the
   * instance keeps anyway), and `v` applies over them — the patch of the transaction that created
   * the instance, so the start variables are not stored twice.
   */
  s?: 1;
  i?: FieldDoc;
  v?: Record<string, unknown>;
  n?: Record<string, FieldDoc>;
}

/** Statuses (instance and node) as {@link StateDoc} stores them: one letter each; any other is stored whole. */
const STATUS_CODES: Readonly<Record<string, string>> = {
  PENDING: 'P',
  READY: 'Y',
  RUNNING: 'R',
  WAITING: 'W',
  RETRYING: 'T',
  SUSPENDED: 'U',
  COMPLETED: 'C',
  FAILED: 'F',
  SKIPPED: 'S',
  COMPENSATING: 'K',
  COMPENSATED: 'D',
  CANCELLED: 'X',
};
const STATUS_NAMES: Readonly<Record<string, string>> = Object.fromEntries(
  Object.entries(STATUS_CODES).map(([name, code]) => [code, name]),
);

/** A status as {@link StateDoc} stores it. */
export function encodeStatus(status: string): string {
  return STATUS_CODES[status] ?? status;
}

/** A status {@link encodeStatus} stored, by its name; undefined when `code` is not a string. */
export function decodeStatus(code: unknown): string | undefined {
  return typeof code === 'string' ? (STATUS_NAMES[code] ?? code) : undefined;
}

/**
 * A map by node id: no prototype, so that a node id that is also a name of Object.prototype
 * (`__proto__`, `constructor`, `toString`: ids allow them) is an entry like any other. `from`'s
 * entries are copied in.
 */
export function nodeMap<T>(from?: Readonly<Record<string, T>>): Record<string, T> {
  const out = Object.create(null) as Record<string, T>;
  // A for-in copy: about 2.5× faster than Object.assign onto a prototype-less object (V8, measured).
  for (const k in from) out[k] = from[k] as T;
  return out;
}

/** The state of an instance that does not exist yet. */
export function emptyState(): StateDoc {
  return { instance: {}, variables: {}, nodes: nodeMap() };
}

/**
 * A JSON value still as the text it was stored as: a {@link Snapshot} keeps JSON columns so, and
 * {@link diffState} compares texts and parses only what changed (the hot path reads every
 * instance a transaction changes twice).
 */
export class JsonText {
  constructor(readonly text: string) {}
  /** The value (parsed once). @throws EngineError DATABASE_CORRUPT when the stored text is not JSON. */
  get value(): unknown {
    let v: unknown;
    try {
      v = JSON.parse(this.text) as unknown;
    } catch (err) {
      throw new EngineError(
        'DATABASE_CORRUPT',
        `a stored JSON column holds text that is not JSON (${(err as Error).message}): was a row edited by hand?`,
        {
          cause: err,
          kind: 'user',
          retryable: false,
        },
      );
    }
    Object.defineProperty(this, 'value', { value: v });
    return v;
  }
}

/**
 * Columns of an instance that transitions read and time travel does not record: kept beside the
 * state so that those reads are answered from it without a statement ({@link StateDerivation.read}).
 */
export interface InstanceRowPart {
  workflowId: number;
  /** The row's optimistic-lock version (every write of the instance family bumps it). */
  version: number;
  deadlineAt: number | null;
  parentId: number | null;
  concurrencyKey: string | null;
  test: boolean;
  /** The pinned results' JSON text, or null. */
  pinsJson: string | null;
}

/** An instance's state as read inside a transaction: a {@link StateDoc} whose JSON values may still be {@link JsonText}. */
export interface Snapshot {
  /** When the instance was created, epoch ms: the base of the document's relative times (not part of the state). */
  createdAt: number;
  instance: FieldDoc;
  variables: Record<string, unknown> | JsonText;
  nodes: Record<string, FieldDoc>;
  /** The columns reads need beyond the state (not part of the state: never diffed nor recorded); absent when not known. */
  row?: InstanceRowPart | undefined;
}

/** The parts of a {@link Snapshot} that {@link diffState} compares. */
export type SnapshotState = Pick<Snapshot, 'instance' | 'variables' | 'nodes'>;

const text = (v: unknown): string => (v instanceof JsonText ? v.text : (JSON.stringify(v) ?? 'undefined'));
const plain = (v: unknown): unknown => (v instanceof JsonText ? v.value : v);
/** Whether two field values are the same JSON: primitives by value, JSON values by their text. */
const same = (a: unknown, b: unknown): boolean =>
  a === b ||
  (typeof a === 'object' && typeof b === 'object' && a !== null && b !== null && text(a) === text(b));

/** The merge patch from `before` to `after` (neither holds a null value), or undefined when equal. */
export function diffFields(before: FieldDoc, after: FieldDoc): FieldDoc | undefined {
  let out: FieldDoc | undefined;
  for (const k in after) {
    const v = after[k];
    if (!(k in before) || !same(before[k], v)) (out ??= {})[k] = plain(v);
  }
  for (const k in before) if (!(k in after)) (out ??= {})[k] = null;
  return out;
}

/** `doc` with a merge patch applied (a copy). */
export function applyFields(doc: FieldDoc, patch: FieldDoc | undefined): FieldDoc {
  if (!patch) return doc;
  const out = { ...doc };
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = v;
  }
  return out;
}

/** The patch from `before` to `after`, or undefined when the state did not change. */
export function diffState(before: SnapshotState, after: SnapshotState): StatePatch | undefined {
  const patch: StatePatch = {};
  const i = diffFields(before.instance, after.instance);
  if (i) patch.i = i;
  let n: Record<string, FieldDoc> | undefined;
  // Outputs this patch sets, by their JSON: a variable equal to one refers to it (made when variables changed).
  let outputs: Map<string, string> | undefined;
  for (const id in after.nodes) {
    const node = after.nodes[id] as FieldDoc;
    const was = before.nodes[id];
    if (was === node) continue; // the same document: a derived state keeps the ones no write replaced
    const d = diffFields(was ?? {}, node);
    if (!d) continue;
    (n ??= nodeMap<FieldDoc>())[id] = d;
  }
  if (n) patch.n = n;
  const v: Record<string, unknown> = {};
  let vars = false;
  const bv = before.variables;
  const av = after.variables;
  if (!(bv instanceof JsonText && av instanceof JsonText && bv.text === av.text)) {
    outputs = new Map<string, string>();
    for (const id in n) {
      const o = (n[id] as FieldDoc).o;
      if (Array.isArray(o)) outputs.set(text(o[0]), id);
    }
    const was = plain(bv) as Record<string, unknown>;
    const now = plain(av) as Record<string, unknown>;
    for (const [k, value] of Object.entries(now)) {
      if (Object.hasOwn(was, k) && text(was[k]) === text(value)) continue;
      const t = text(value);
      const ref = outputs.get(t);
      v[k] = ref !== undefined && ref.length < t.length ? ref : [value];
      vars = true;
    }
    for (const k of Object.keys(was)) {
      if (!Object.hasOwn(now, k)) {
        v[k] = null;
        vars = true;
      }
    }
  }
  if (vars) patch.v = v;
  return patch.i || patch.v || patch.n ? patch : undefined;
}

/** `doc` with `patch` applied (a copy); `start`: the instance's start variables (see {@link StatePatch.s}). */
export function applyState(doc: StateDoc, patch: StatePatch, start?: Record<string, unknown>): StateDoc {
  const nodes = nodeMap(doc.nodes);
  for (const [id, d] of Object.entries(patch.n ?? {})) nodes[id] = applyFields(nodes[id] ?? {}, d);
  const variables = { ...(patch.s === 1 ? start : doc.variables) };
  for (const [k, v] of Object.entries(patch.v ?? {})) {
    if (v === null) delete variables[k];
    else if (Array.isArray(v)) variables[k] = v[0];
    else if (typeof v === 'string') variables[k] = (nodes[v]?.o as unknown[] | undefined)?.[0];
  }
  return { instance: applyFields(doc.instance, patch.i), variables, nodes };
}

/**
 * One patch doing what `a` then `b` do. Fields: `b`'s win. A variable of `a` that refers to a
 * node output `b` changes is resolved to `a`'s value first.
 */
export function composePatches(a: StatePatch, b: StatePatch): StatePatch {
  const out: StatePatch = {};
  if (a.i || b.i) out.i = { ...a.i, ...b.i };
  if (a.n || b.n) {
    const n = nodeMap(a.n);
    const bn = b.n;
    if (bn) for (const id in bn) n[id] = { ...a.n?.[id], ...bn[id] };
    out.n = n;
  }
  if (b.s === 1) {
    // `b` starts the variables over: nothing of `a`'s stands.
    out.s = 1;
    if (b.v) out.v = { ...b.v };
  } else if (a.v || b.v) {
    if (a.s === 1) out.s = 1;
    const v: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(a.v ?? {}))
      v[k] = typeof x === 'string' && b.n?.[x] !== undefined && 'o' in (b.n[x] as FieldDoc) ? a.n?.[x]?.o : x;
    out.v = { ...v, ...b.v };
  } else if (a.s === 1) out.s = 1;
  return out;
}

/** The state after folding `patches` (oldest first) over the empty state; `start`: the instance's start variables (see {@link StatePatch.s}). */
export function foldStates(patches: Iterable<StatePatch>, start?: Record<string, unknown>): StateDoc {
  let doc = emptyState();
  for (const p of patches) doc = applyState(doc, p, start);
  return doc;
}

/** Time travel's queries inside a write transaction (table `history_state`). */
export interface StateQueries {
  /**
   * The instance's state now, inside this transaction (PostgreSQL: under the instance's lock), its
   * JSON columns as {@link JsonText}, or undefined when it does not exist.
   */
  snapshot(instanceId: number): Snapshot | undefined;
  /**
   * Takes the instance's pending patch (changes since its last entry that no entry showed yet)
   * out of the table and answers it, or undefined when there is none (one statement).
   */
  takePending(instanceId: number): StatePatch | undefined;
  /** Records `patch` of an instance under `historyId` (the first entry the transaction appended for it), or as its pending patch (`historyId` 0). */
  record(p: { instanceId: number; historyId: number; patch: StatePatch }): void;
  /**
   * {@link StateQueries.record} of every patch of a transaction in one statement, for a backend
   * where each statement is a round trip to a server (PostgreSQL). Optional: without it each
   * patch is recorded by itself (SQLite: one multi-row INSERT measured no faster).
   */
  recordAll?(patches: readonly { instanceId: number; historyId: number; patch: StatePatch }[]): void;
  /**
   * {@link StateQueries.snapshot} and {@link StateQueries.takePending} in one statement, for a
   * backend where each read is a round trip to a server (PostgreSQL); undefined when the instance
   * does not exist. Optional: without it the two are called apart, the pending patch only at the end.
   */
  snapshotTakingPending?(
    instanceId: number,
  ): { snapshot: Snapshot; pending: StatePatch | undefined } | undefined;
  /**
   * The schedule's lease check (ScheduleQueries.holds) and, when it holds,
   * {@link StateQueries.snapshotTakingPending} of the row's instance, in one statement: committing
   * an outcome reads that state next, and on a backend where each read is a round trip to a server
   * (PostgreSQL) the two reads were two. When the lease is not held, nothing is taken and no state is
   * answered. Optional.
   */
  holdsTakingSnapshot?(p: { id: number; version: number; owner: string; instanceId: number }): {
    holds: boolean;
    /** The instance's state (undefined: it does not exist); answered only when `holds`. */
    state?: { snapshot: Snapshot; pending: StatePatch | undefined } | undefined;
  };
}

/** Ended instance statuses (engine/vocabulary.ts TERMINAL_STATUSES) as {@link StateDoc} stores them. */
const ENDED_CODES: ReadonlySet<unknown> = new Set([...TERMINAL_STATUSES].map(encodeStatus));

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
  /** After the transaction committed: the states it ended with go to the cache (when one was given). */
  committed(): void;
}

/**
 * What one connection knows of instances' states between its transactions: the state each had
 * after the last transaction of this connection that changed it, and whether a pending patch
 * (key 0) of it is stored. Valid only while no other connection wrote: the backend clears it
 * when one did (SQLite: `PRAGMA data_version` moved, https://sqlite.org/pragma.html#pragma_data_version),
 * and after a transaction that failed. A hit spares a transaction the read of the instance's
 * state before its first change, and the pending patch's delete when none is stored — most of
 * what recording costs on the hot path, where an instance's steps follow each other in one process.
 * Least recently used entries go beyond `max`; an ended instance is not kept ({@link trackStates}),
 * so what stays is the live instances a process is moving (each entry about 1.3 KB of heap, which
 * V8 lets grow a few times over before a full collection: issue 16's peak RSS).
 */
export class StateCache {
  private readonly entries = new Map<number, { snapshot: Snapshot; pending: boolean }>();

  constructor(private readonly max = 10_000) {}

  get(id: number): { snapshot: Snapshot; pending: boolean } | undefined {
    return this.entries.get(id);
  }

  set(id: number, entry: { snapshot: Snapshot; pending: boolean } | undefined): void {
    this.entries.delete(id);
    if (entry === undefined) return;
    this.entries.set(id, entry);
    if (this.entries.size > this.max) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
  }

  clear(): void {
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }
}

/**
 * What the node and instance families' writes do to an instance's state (engine/store/state-effects.ts
 * STATE_EFFECTS), so that {@link trackStates} derives the state a transaction ends with from its
 * writes instead of reading it again at the end.
 */
export interface StateDerivation {
  /** Applies to `s` (in place: its parts replaced, never mutated) what write `method` of `family` did, called with `p`, answering `result`. */
  apply(family: 'nodes' | 'instances', method: string, s: Snapshot, p: unknown, result: unknown): void;
  /** The state of an instance the instance family's `insert` just created, called with `p`. */
  created(p: unknown): Snapshot;
  /**
   * What read `method` of `family` answers for the instance whose state is `s` (its id `id`), or
   * undefined when the state cannot answer it (the read then runs): a read answered so costs no
   * statement (on PostgreSQL, no round trip).
   */
  read(family: 'nodes' | 'instances', method: string, s: Snapshot, id: number): unknown;
  /** The reads of each family {@link StateDerivation.read} may answer: the others run as they are, with no state taken for them. */
  readonly answers: Readonly<Record<'nodes' | 'instances', ReadonlySet<string>>>;
}

/** Options of {@link trackStates}. */
export interface TrackOptions {
  /** States known from this connection's earlier transactions (see {@link StateCache}). */
  cache?: StateCache | undefined;
  /** How the state a transaction ends with is derived from its writes (see {@link StateDerivation}). */
  derive: StateDerivation;
  /**
   * Also read each changed instance at the end and throw when it differs from the derived state,
   * and run every read answered from a state to throw when its answer differs (tests:
   * RUNNEL_CHECK_STATE_RECORD=1), so a write whose effect does not match its statement cannot go
   * unseen.
   */
  verify?: boolean;
}

/** Throws when a read answered from the derived state (`served`) differs from the statement's answer (`stored`) (see {@link TrackOptions.verify}). */
function verifyServed(what: string, id: number, served: unknown, stored: unknown): void {
  if (isDeepStrictEqual(served, stored)) return;
  throw new Error(
    `time travel's record: ${what}(${id}) answered from the derived state ${JSON.stringify(served)}, the database ${JSON.stringify(stored)}`,
  );
}

/** Throws when the state derived for instance `id` (undefined: none, it does not exist) differs from the stored one (see {@link TrackOptions.verify}). */
function verifyDerived(id: number, derived: Snapshot | undefined, stored: Snapshot | undefined): void {
  if (!derived && !stored) return;
  const rowDiffers =
    derived?.row !== undefined && stored?.row !== undefined && !isDeepStrictEqual(derived.row, stored.row);
  const difference =
    derived && stored
      ? (diffState(derived, stored) ??
        diffState(stored, derived) ??
        (rowDiffers ? { row: derived.row, stored: stored.row } : undefined))
      : derived
        ? 'the instance is gone'
        : 'no state was derived';
  if (difference === undefined) return;
  throw new Error(
    `time travel's record: instance ${id} as derived from its writes differs from the stored one: ${JSON.stringify(difference)}`,
  );
}

/**
 * Wraps `q` so that every change of an instance's state through `q.instances` and `q.nodes` is
 * recorded by `finish` (see the module doc), through `q.states`. With a cache (valid for this
 * transaction: see {@link StateCache}), states known from earlier transactions are not read again;
 * the state a transaction ends with is derived from its writes, never read again.
 */
export function trackStates(q: WriteQueries, options: TrackOptions): StateTracking {
  const { cache, derive, verify = false } = options;
  const states = q.states;
  /** Instances changed: the state before the first change (undefined: created in this transaction). */
  const before = new Map<number, Snapshot | undefined>();
  /** Whether an instance has a pending patch stored, where known (false: none; absent: unknown, read it). */
  const pendingKnown = new Map<number, boolean>();
  /** The first history entry appended per instance. */
  const firstEntry = new Map<number, number>();
  /** What `committed` hands the cache: the state after, or undefined (deleted). */
  const after = new Map<number, { snapshot: Snapshot; pending: boolean } | undefined>();
  /** The start variables of the instances this transaction created: their patch refers to them (StatePatch.s). */
  const startVariables = new Map<number, Snapshot['variables']>();
  /** The state of each instance a write changed, so far (a copy of its `before` with the writes applied). */
  const working = new Map<number, Snapshot>();
  /** Pending patches taken out of the table with the state before (StateQueries.snapshotTakingPending), held until `finish`. */
  const taken = new Map<number, StatePatch>();
  /** Instances a retention purge of this transaction may have deleted (not through the instance family): nothing is known of them. */
  const purged = new Map<number, true>();
  const touch = (id: number | undefined): void => {
    if (id === undefined || before.has(id)) return;
    const known = cache?.get(id);
    if (known) {
      before.set(id, known.snapshot);
      pendingKnown.set(id, known.pending);
    } else if (states.snapshotTakingPending) {
      const r = states.snapshotTakingPending(id);
      before.set(id, r?.snapshot);
      if (r) pendingKnown.set(id, false);
      if (r?.pending) taken.set(id, r.pending);
    } else before.set(id, states.snapshot(id));
  };
  /** The working state of instance `id` (begun from its state before this transaction), or undefined when it does not exist. */
  const work = (id: number): Snapshot | undefined => {
    let w = working.get(id);
    if (w) return w;
    const b = before.get(id);
    if (!b) return undefined;
    w = {
      createdAt: b.createdAt,
      instance: b.instance,
      variables: b.variables,
      nodes: nodeMap(b.nodes),
      row: b.row,
    };
    working.set(id, w);
    return w;
  };
  /**
   * The state of instance `id` now, when known without a read of its own (changed in this
   * transaction, or cached), else undefined. On a backend that reads the state in one statement
   * with the pending patch (PostgreSQL), an instance not known yet is read so: that one round trip
   * stands for the read asked for and for the one its first change would make.
   */
  const known = (id: number): Snapshot | undefined => {
    if (purged.has(id)) return undefined;
    const w = working.get(id);
    if (w) return w;
    if (!before.has(id)) {
      if (!cache?.get(id) && !states.snapshotTakingPending) return undefined;
      touch(id);
    }
    return before.get(id);
  };
  const wrap = <F extends object>(family: F, name: 'nodes' | 'instances', created?: string): F => {
    /** Each method's wrapper, made at its first call in the transaction. */
    const made = new Map<string, unknown>();
    return new Proxy(family, {
      get(target, key, receiver) {
        if (typeof key === 'string') {
          const m = made.get(key);
          if (m !== undefined) return m;
        }
        const v = Reflect.get(target, key, receiver) as unknown;
        if (typeof v !== 'function' || typeof key !== 'string') return v;
        const w = wrapMethod(target, key, v as (...args: unknown[]) => unknown);
        made.set(key, w);
        return w;
      },
    });
    function wrapMethod(target: F, key: string, fn: (...args: unknown[]) => unknown): unknown {
      if (READS.has(key)) {
        if (!derive.answers[name].has(key)) return fn;
        // A read the state may answer: no statement while the instance's state is known.
        return (...args: unknown[]) => {
          const id = args[0];
          const s = typeof id === 'number' ? known(id) : undefined;
          const answer = s === undefined ? undefined : derive.read(name, key, s, id as number);
          if (answer === undefined) return fn.apply(target, args);
          if (verify) verifyServed(`${name}.${key}`, id as number, answer, fn.apply(target, args));
          return answer;
        };
      }
      return (...args: unknown[]) => {
        if (key === created) {
          const id = fn.apply(target, args);
          if (typeof id === 'number' && !before.has(id)) {
            before.set(id, undefined);
            pendingKnown.set(id, false);
            const created = derive.created(args[0]);
            working.set(id, created);
            startVariables.set(id, created.variables);
          }
          return id;
        }
        const id = instanceOf(args);
        touch(id);
        const result = fn.apply(target, args);
        const w = id === undefined ? undefined : work(id);
        if (w) derive.apply(name, key, w, args[0], result);
        return result;
      };
    }
  };
  const retention: RetentionQueries = {
    ...q.retention,
    purge: (ids) => {
      for (const id of ids) purged.set(id, true);
      return q.retention.purge(ids);
    },
  };
  const history: HistoryQueries = {
    ...q.history,
    append: (p) => {
      const id = q.history.append(p);
      if (p.instanceId !== null && !firstEntry.has(p.instanceId)) firstEntry.set(p.instanceId, id);
      return id;
    },
    deadLetter: (p) => q.history.deadLetter(p),
  };
  /**
   * A savepoint whose function throws is rolled back: what the tracking learnt inside it goes with
   * it (the working states, the first entries appended, the instances it created, the pending
   * patches it took out of the table: they are back there).
   */
  const savepoint = <T>(fn: () => T): T => {
    const saved = {
      before: new Map(before),
      pendingKnown: new Map(pendingKnown),
      taken: new Map(taken),
      startVariables: new Map(startVariables),
      firstEntry: new Map(firstEntry),
      working: new Map([...working].map(([id, w]) => [id, { ...w, nodes: nodeMap(w.nodes) }])),
      purged: new Map(purged),
    };
    try {
      return q.savepoint(fn);
    } catch (err) {
      for (const [map, copy] of [
        [before, saved.before],
        [pendingKnown, saved.pendingKnown],
        [taken, saved.taken],
        [startVariables, saved.startVariables],
        [firstEntry, saved.firstEntry],
        [working, saved.working],
        [purged, saved.purged],
      ] as [Map<number, unknown>, Map<number, unknown>][]) {
        map.clear();
        for (const [k, v] of copy) map.set(k, v);
      }
      throw err;
    }
  };
  // An outcome's lease check reads the instance's state in the same statement, where the backend
  // can (StateQueries.holdsTakingSnapshot), unless the state is known already.
  const holdsTakingSnapshot = states.holdsTakingSnapshot?.bind(states);
  const schedule: WriteQueries['schedule'] = holdsTakingSnapshot
    ? {
        ...q.schedule,
        holds: (p) => {
          const id = p.instanceId;
          if (before.has(id) || purged.has(id) || cache?.get(id)) return q.schedule.holds(p);
          const r = holdsTakingSnapshot(p);
          if (r.holds) {
            // What touch() learns from snapshotTakingPending, learnt here.
            before.set(id, r.state?.snapshot);
            if (r.state) pendingKnown.set(id, false);
            if (r.state?.pending) taken.set(id, r.state.pending);
          }
          return r.holds;
        },
      }
    : q.schedule;
  const queries: WriteQueries = {
    ...q,
    schedule,
    instances: wrap(q.instances, 'instances', 'insert'),
    nodes: wrap(q.nodes, 'nodes'),
    history,
    retention,
    savepoint,
  };
  /** The patches `finish` records: at once, or all in one statement at its end (StateQueries.recordAll). */
  const recorded: { instanceId: number; historyId: number; patch: StatePatch }[] = [];
  const put = (p: { instanceId: number; historyId: number; patch: StatePatch }): void => {
    if (states.recordAll) recorded.push(p);
    else states.record(p);
  };
  /** Records the patch; returns whether a pending patch of the instance is stored after it. */
  const save = (id: number, patch: StatePatch | undefined): boolean => {
    const historyId = firstEntry.get(id) ?? 0;
    const hadPending = pendingKnown.get(id);
    const early = taken.get(id);
    if (historyId === 0 && !patch) {
      // Nothing to record: a pending patch taken with the state before goes back as it was.
      if (early) put({ instanceId: id, historyId: 0, patch: early });
      return early !== undefined || (hadPending ?? true);
    }
    const pending = early ?? (hadPending === false ? undefined : states.takePending(id));
    const merged = pending && patch ? composePatches(pending, patch) : (pending ?? patch);
    if (merged) put({ instanceId: id, historyId, patch: merged });
    return historyId === 0 ? merged !== undefined : false;
  };
  /** The patch from `was` to `now`; an instance created here starts from its start variables, which it keeps anyway (StatePatch.s). */
  const changeOf = (id: number, was: Snapshot | undefined, now: Snapshot): StatePatch | undefined => {
    const start = was === undefined ? startVariables.get(id) : undefined;
    if (start === undefined) return diffState(was ?? emptyState(), now);
    return { s: 1, ...diffState({ instance: {}, variables: start, nodes: nodeMap() }, now) };
  };
  /** The state instance `id` ends this transaction with (undefined: it is gone). */
  const ending = (id: number, was: Snapshot | undefined): Snapshot | undefined => {
    // No working state: no write changed it.
    const now = working.get(id) ?? was;
    if (verify) verifyDerived(id, now, states.snapshot(id));
    return now;
  };
  return {
    queries,
    finish() {
      for (const [id, was] of before) {
        // Only read, then purged: nothing to record.
        if (purged.has(id) && !working.has(id)) continue;
        const now = ending(id, was);
        if (!now) {
          after.set(id, undefined); // deleted in this transaction
          continue;
        }
        const pending = save(id, now === was ? undefined : changeOf(id, was, now));
        // An ended instance leaves the cache: it is seldom changed again (a miss reads it then), and
        // kept it would hold the heap a whole state per finished instance (see StateCache).
        after.set(id, ENDED_CODES.has(now.instance.s) ? undefined : { snapshot: now, pending });
      }
      // Entries of instances this transaction did not change still show their pending changes.
      for (const id of firstEntry.keys()) {
        if (before.has(id)) continue;
        const known = cache?.get(id);
        if (known && !known.pending) continue; // nothing pending, nothing changed: nothing to record
        save(id, undefined);
        if (known) after.set(id, { snapshot: known.snapshot, pending: false });
      }
      // Deleted, or left alone as not ended: either way read again when next needed.
      for (const id of purged.keys()) after.set(id, undefined);
      if (recorded.length > 0) states.recordAll?.(recorded);
    },
    committed() {
      if (cache) for (const [id, entry] of after) cache.set(id, entry);
    },
  };
}
