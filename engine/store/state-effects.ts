/**
 * What each write of the node and instance families does to an instance's state as time travel
 * records it ({@link Snapshot}, engine/store/history-state.ts), so that the state a transaction
 * ends with is derived from the writes it made instead of read again at its end: that read (the
 * instance row and every node row of each changed instance) was most of what the record cost on
 * the hot path.
 *
 * Each effect mirrors its statement (engine/db/queries/nodes.ts and instances.ts): the fields it
 * sets, the ones it clears, and the conditions of its SQL (a CASE, a `coalesce`, a WHERE beyond
 * the key) read off the state before it. A write of a row that does not exist changes nothing,
 * and so does its effect. The tables are typed over every write of the families: a write added to
 * the port without an effect does not compile. The test suite checks every transaction's derived
 * state against the stored one (RUNNEL_CHECK_STATE_RECORD=1, engine/db/sqlite-storage.ts).
 */
import type { SerializedError } from '../errors';
import type { InstanceQueries, NewNode, NodeQueries, Pins, Suspension } from './queries';
import type { InstanceStatus } from '../vocabulary';
import {
  decodeStatus,
  encodeStatus,
  JsonText,
  nodeMap,
  type FieldDoc,
  type Snapshot,
  type StateDerivation,
} from './history-state';

/** Methods of the node family that change nothing (engine/store/history-state.ts READS). */
type NodeReads = 'get' | 'all' | 'open' | 'openCounts' | 'results' | 'compensable' | 'otherIncidents';
/** Methods of the instance family that change nothing. */
type InstanceReads = 'get' | 'head' | 'variables' | 'lockConcurrency' | 'countAdmitted' | 'oldestHeld';

/** An effect: what a write with parameters `p` that answered `result` did to the state `s` (changed in place; its parts are replaced, never mutated). */
type Effect<F> = F extends (p: infer P) => infer R ? (s: Snapshot, p: P, result: R) => void : never;

/** The effects of every write of a family `F` whose reads are `Reads`. */
type Effects<F, Reads extends keyof F> = { [K in Exclude<keyof F, Reads>]: Effect<F[K]> };

/** Fields kept as counters ({@link Snapshot}: absent while 0). */
const COUNTERS: ReadonlySet<string> = new Set(['a', 'i', 't', 'h']);

/** `doc` with `set` applied: a null (or undefined) field, or a counter at 0, is removed. A copy (built without `delete`, which slows an object down). */
function withFields(doc: FieldDoc, set: FieldDoc): FieldDoc {
  const out: FieldDoc = {};
  for (const k in doc) if (!(k in set)) out[k] = doc[k];
  for (const k in set) {
    const v = set[k];
    if (v !== null && v !== undefined && !(v === 0 && COUNTERS.has(k))) out[k] = v;
  }
  return out;
}

/** A JSON column's value as the state keeps it: the text the statement stores. */
const json = (v: unknown): JsonText => new JsonText(JSON.stringify(v));

/** A counter's value (absent: 0). */
const n = (v: unknown): number => (typeof v === 'number' ? v : 0);

/** Sets node `nodeId`'s fields, when the node exists (an UPDATE of no row changes nothing). */
function node(s: Snapshot, nodeId: string, set: (old: FieldDoc) => FieldDoc): void {
  const old = s.nodes[nodeId];
  if (old !== undefined) s.nodes[nodeId] = withFields(old, set(old));
}

/** Sets the instance's fields. */
function inst(s: Snapshot, set: (old: FieldDoc) => FieldDoc): void {
  s.instance = withFields(s.instance, set(s.instance));
}

/** A started attempt (startAttempt, startReadyAttempt): RUNNING, attempt + 1, started now, no wait. */
const started = (s: Snapshot, nodeId: string, now: number): void =>
  node(s, nodeId, (o) => ({ s: 'R', a: n(o.a) + 1, b: now - s.createdAt, w: null }));

/** The effects of {@link NodeQueries}' writes (engine/db/queries/nodes.ts). */
/** A node inserted (NodeQueries.insert, insertAll): its fields as the row starts. */
function inserted(s: Snapshot, now: number, { nodeId, status, attemptLimit, pendingIn }: NewNode): void {
  const running = status === 'RUNNING';
  s.nodes[nodeId] = withFields(
    {},
    {
      s: encodeStatus(status),
      a: running ? 1 : 0,
      l: attemptLimit,
      i: pendingIn,
      b: running ? now - s.createdAt : null,
    },
  );
}

const NODE_EFFECTS: Effects<NodeQueries, NodeReads> = {
  insert: (s, p) => inserted(s, p.now, p),
  insertAll: (s, { now, nodes }) => {
    for (const p of nodes) inserted(s, now, p);
  },
  startAttempt: (s, { nodeId, now }) => started(s, nodeId, now),
  startReadyAttempt: (s, { nodeId, now }, r) => {
    if (r !== undefined) started(s, nodeId, now);
  },
  resolveEdge: (s, { nodeId, taken, need, start, now }, r) => {
    if (r === undefined) return;
    const t = taken ? 1 : 0;
    node(s, nodeId, (o) => {
      // The statement's condition: the last unresolved edge of a PENDING node, enough taken.
      const decided = o.s === 'P' && n(o.i) === 1 && n(o.t) + t >= need;
      return {
        s: encodeStatus(r.status),
        a: r.attempt,
        i: r.pendingIn,
        t: n(o.t) + t,
        b: start && decided ? now - s.createdAt : o.b,
      };
    });
  },
  complete: (s, { nodeId, output, now, seq }) =>
    node(s, nodeId, () => ({
      s: 'C',
      o: new JsonText(`[${JSON.stringify(output ?? null)}]`),
      e: null,
      w: null,
      f: now - s.createdAt,
      q: seq,
    })),
  fail: (s, { nodeId, error, now }) =>
    node(s, nodeId, () => ({ s: 'F', e: json(error), f: now - s.createdAt })),
  park: (s, { nodeId, status, wait, error }) =>
    node(s, nodeId, (o) => ({
      s: encodeStatus(status),
      w: json(wait),
      e: error === undefined ? o.e : json(error),
    })),
  markFailure: (s, { nodeId, wait }) => node(s, nodeId, () => ({ w: json(wait) })),
  setWait: (s, { nodeId, wait }) => node(s, nodeId, () => ({ w: json(wait) })),
  ready: (s, { nodeId, attemptLimit }) =>
    node(s, nodeId, () => ({ s: 'Y', l: attemptLimit, e: null, w: null })),
  setStatus: (s, { nodeId, status }) => node(s, nodeId, () => ({ s: encodeStatus(status) })),
  unstart: (s, { nodeId, status }) =>
    node(s, nodeId, (o) => ({ s: encodeStatus(status), a: n(o.a) - 1, b: null })),
  compensated: (s, { nodeId }) => node(s, nodeId, () => ({ s: 'D', w: null, e: null })),
  resetFailedCompensations: (s) => {
    for (const [id, d] of Object.entries(s.nodes))
      if (d.s === 'K') s.nodes[id] = withFields(d, { s: 'C', w: null, e: null });
  },
};

/** The effects of {@link InstanceQueries}' writes but `insert` ({@link createdState}) (engine/db/queries/instances.ts). */
const INSTANCE_EFFECTS: Omit<Effects<InstanceQueries, InstanceReads>, 'insert'> = {
  touch: (s, { status, now }) => inst(s, (o) => ({ s: encodeStatus(status), b: o.b ?? now - s.createdAt })),
  setVariables: (s, { variables }) => {
    s.variables = json(variables);
  },
  mergeVariables: (s, { patch }) => {
    const v = s.variables instanceof JsonText ? s.variables.value : s.variables;
    s.variables = json({ ...(v as Record<string, unknown>), ...patch });
  },
  setStatus: (s, { status }) => inst(s, () => ({ s: encodeStatus(status) })),
  end: (s, { status, error, now }) =>
    inst(s, (o) => ({
      s: encodeStatus(status),
      e: error === undefined ? o.e : json(error),
      f: now - s.createdAt,
      u: null,
      p: null,
    })),
  pause: (s, { now }) => inst(s, () => ({ p: now - s.createdAt })),
  unpause: (s, { now }) => {
    const p = s.instance.p;
    if (typeof p !== 'number') return; // the statement's WHERE: only a paused instance
    // Its deadline moves by the time it was paused.
    if (s.row && s.row.deadlineAt !== null)
      s.row = { ...s.row, deadlineAt: s.row.deadlineAt + (now - (p + s.createdAt)) };
    inst(s, () => ({ p: null }));
  },
  suspend: (s, { suspension }) =>
    inst(s, (o) => ({ s: 'U', u: o.s === 'U' && o.u !== undefined ? o.u : json(suspension) })),
  startCompensating: (s, { endStatus, error }) =>
    inst(s, (o) => ({ s: 'K', x: endStatus, e: error === undefined ? o.e : json(error), u: null })),
  clearSuspension: (s, { status }) => inst(s, () => ({ s: encodeStatus(status), u: null })),
  admit: (s) => inst(s, () => ({ h: 0 })),
  hold: (s) => inst(s, () => ({ s: 'P', h: 1 })),
  reopen: (s, { deadlineAt }) => {
    if (s.row) s.row = { ...s.row, deadlineAt };
    inst(s, () => ({ s: 'R', f: null, e: null, x: null }));
  },
};

/** The state of an instance {@link InstanceQueries.insert} just created with `p`. */
function createdState(p: Parameters<InstanceQueries['insert']>[0]): Snapshot {
  return {
    createdAt: p.now,
    instance: withFields(
      {},
      { s: encodeStatus(p.status), b: p.status === 'RUNNING' ? 0 : null, h: p.held === true ? 1 : 0 },
    ),
    variables: new JsonText(p.variablesJson),
    nodes: nodeMap(),
    // A child that does not say whether it is a test run is one when its parent is: not known here.
    row:
      p.test === undefined && p.parentId !== undefined
        ? undefined
        : {
            workflowId: p.workflowId,
            version: 1,
            deadlineAt: p.deadlineAt,
            parentId: p.parentId ?? null,
            concurrencyKey: p.concurrencyKey ?? null,
            test: p.test ?? false,
            pinsJson: p.pinsJson ?? null,
          },
  };
}

/** Node statuses (as the state stores them) that `openCounts` counts open, and of them active. */
const OPEN_CODES: ReadonlySet<unknown> = new Set(
  ['PENDING', 'READY', 'RUNNING', 'WAITING', 'RETRYING'].map(encodeStatus),
);
const ACTIVE_CODES: ReadonlySet<unknown> = new Set(['READY', 'RUNNING'].map(encodeStatus));

/** When the instance was paused (epoch ms), or null. */
const pausedAt = (s: Snapshot): number | null =>
  typeof s.instance.p === 'number' ? s.instance.p + s.createdAt : null;

/** The instance's status by its name. */
const statusOf = (s: Snapshot): InstanceStatus => decodeStatus(s.instance.s) as InstanceStatus;

/**
 * The reads a state answers ({@link StateDerivation.read}), each exactly what its statement
 * answers (engine/db/queries/instances.ts and nodes.ts; the test suite runs the statement too and
 * compares), or undefined when the state does not know enough (the statement runs).
 */
const READ_ANSWERS: {
  instances: {
    [K in 'get' | 'head' | 'variables']: (s: Snapshot, id: number) => ReturnType<InstanceQueries[K]>;
  };
  nodes: { openCounts: (s: Snapshot, id: number) => ReturnType<NodeQueries['openCounts']> };
} = {
  instances: {
    get: (s, id) => {
      const r = s.row;
      if (!r || !(s.variables instanceof JsonText)) return undefined;
      const i = s.instance;
      try {
        // Parsed afresh: the caller owns what it gets (the statement's answer is new objects too).
        return {
          id,
          workflowId: r.workflowId,
          status: statusOf(s),
          variables: JSON.parse(s.variables.text) as Record<string, unknown>,
          version: r.version,
          suspension: i.u instanceof JsonText ? (JSON.parse(i.u.text) as Suspension) : null,
          endStatus: (i.x as 'FAILED' | 'CANCELLED' | undefined) ?? null,
          startedAt: typeof i.b === 'number' ? i.b + s.createdAt : null,
          deadlineAt: r.deadlineAt,
          error: i.e instanceof JsonText ? (JSON.parse(i.e.text) as SerializedError) : null,
          parentId: r.parentId,
          pausedAt: pausedAt(s),
          concurrencyKey: r.concurrencyKey,
          test: r.test,
          pins: r.pinsJson === null ? null : (JSON.parse(r.pinsJson) as Pins),
        };
      } catch {
        return undefined; // not JSON: the statement runs and says so
      }
    },
    head: (s, id) => {
      const r = s.row;
      if (!r) return undefined;
      return {
        id,
        status: statusOf(s),
        deadlineAt: r.deadlineAt,
        parentId: r.parentId,
        pausedAt: pausedAt(s),
        concurrencyKey: r.concurrencyKey,
        test: r.test,
      };
    },
    variables: (s) => {
      const r = s.row;
      if (!r || !(s.variables instanceof JsonText)) return undefined;
      let variables: Record<string, unknown>;
      let pins: Pins | null;
      try {
        // Parsed afresh: the caller owns what it gets (the statement's answer is a new object too).
        variables = JSON.parse(s.variables.text) as Record<string, unknown>;
        pins = r.pinsJson === null ? null : (JSON.parse(r.pinsJson) as Pins);
      } catch {
        return undefined; // not JSON: the statement runs and says so
      }
      return { status: statusOf(s), pausedAt: pausedAt(s), test: r.test, variables, pins };
    },
  },
  nodes: {
    openCounts: (s) => {
      let open = 0;
      let active = 0;
      for (const id in s.nodes) {
        const code = (s.nodes[id] as FieldDoc).s;
        if (OPEN_CODES.has(code)) open++;
        if (ACTIVE_CODES.has(code)) active++;
      }
      return { open, active };
    },
  },
};

/** A write's effect by family and method, or undefined for a method that changes nothing. */
function effectOf(
  family: 'nodes' | 'instances',
  method: string,
): ((s: Snapshot, p: unknown, result: unknown) => void) | undefined {
  const table = (family === 'nodes' ? NODE_EFFECTS : INSTANCE_EFFECTS) as Record<
    string,
    ((s: Snapshot, p: unknown, result: unknown) => void) | undefined
  >;
  return Object.hasOwn(table, method) ? table[method] : undefined;
}

/** The node and instance writes' effects, for engine/store/history-state.ts trackStates (see the module doc). */
export const STATE_EFFECTS: StateDerivation = {
  apply(family, method, s, p, result) {
    const effect = effectOf(family, method);
    if (!effect) return;
    // Every write of the instance family bumps the row's version, but an unpause of an instance not paused (its WHERE).
    if (family === 'instances' && s.row && !(method === 'unpause' && typeof s.instance.p !== 'number'))
      s.row = { ...s.row, version: s.row.version + 1 };
    effect(s, p, result);
  },
  created: (p) => createdState(p as Parameters<InstanceQueries['insert']>[0]),
  read(family, method, s, id) {
    const table = READ_ANSWERS[family] as Record<string, ((s: Snapshot, id: number) => unknown) | undefined>;
    return Object.hasOwn(table, method) ? table[method]?.(s, id) : undefined;
  },
  answers: {
    instances: new Set(Object.keys(READ_ANSWERS.instances)),
    nodes: new Set(Object.keys(READ_ANSWERS.nodes)),
  },
};

/**
 * Whether time travel's record also reads each changed instance at the end of every transaction
 * to check the state derived from the writes (RUNNEL_CHECK_STATE_RECORD=1: the test suite sets it,
 * so every test checks the record; a read per changed instance, so off otherwise).
 */
export const CHECK_STATE_RECORD = process.env.RUNNEL_CHECK_STATE_RECORD === '1';
