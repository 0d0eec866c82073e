/**
 * SQLite: time travel's queries (table `history_state`, migration 11; engine/store/history-state.ts):
 * an instance's state read as one document inside a write transaction, a transaction's patch
 * recorded, and the read of the patches up to a history entry. A patch is keyed by its history
 * entry's id alone (migration 16: appended, not inserted among an instance's rows), an instance's
 * pending patch (the port's entry 0) by minus the instance's id; an instance's patches are found
 * through its history entries.
 *
 * The document's mapping from rows ({@link toStateDoc}) is shared with PostgreSQL.
 */
import type Database from 'better-sqlite3';
import type { HistoryEvent } from '../../api/contract';
import type { ReadModel, StateTimeline, TimeTravelReads } from '../../store/port';
import {
  encodeStatus,
  JsonText,
  nodeMap,
  type FieldDoc,
  type Snapshot,
  type StatePatch,
  type StateQueries,
} from '../../store/history-state';

/** An instance's state columns as both backends select them. */
export interface RawStateInstance {
  status: string;
  variablesJson: string;
  errorJson: string | null;
  suspensionJson: string | null;
  endStatus: string | null;
  pausedAt: number | null;
  startedAt: number | null;
  endedAt: number | null;
  held: number;
  createdAt: number;
  workflowId: number;
  version: number;
  deadlineAt: number | null;
  parentId: number | null;
  concurrencyKey: string | null;
  test: number;
  pinsJson: string | null;
}

/** A node's state columns as both backends select them. */
export interface RawStateNode {
  nodeId: string;
  status: string;
  attempt: number;
  attemptLimit: number;
  pendingIn: number;
  takenIn: number;
  outputJson: string | null;
  errorJson: string | null;
  waitJson: string | null;
  completedSeq: number | null;
  startedAt: number | null;
  endedAt: number | null;
}

/** The instance columns of a state document (SQLite spelling; PostgreSQL quotes the aliases). */
export const STATE_INSTANCE_COLS = [
  ['status', 'status'],
  ['variables_json', 'variablesJson'],
  ['error_json', 'errorJson'],
  ['suspension_json', 'suspensionJson'],
  ['end_status', 'endStatus'],
  ['paused_at', 'pausedAt'],
  ['started_at', 'startedAt'],
  ['ended_at', 'endedAt'],
  ['held', 'held'],
  ['created_at', 'createdAt'],
  // Not part of the state: what reads answered from it need (Snapshot.row).
  ['workflow_id', 'workflowId'],
  ['version', 'version'],
  ['deadline_at', 'deadlineAt'],
  ['parent_id', 'parentId'],
  ['concurrency_key', 'concurrencyKey'],
  ['test', 'test'],
  ['pins_json', 'pinsJson'],
] as const;

/** The node columns of a state document. */
export const STATE_NODE_COLS = [
  ['node_id', 'nodeId'],
  ['status', 'status'],
  ['attempt', 'attempt'],
  ['attempt_limit', 'attemptLimit'],
  ['pending_in', 'pendingIn'],
  ['taken_in', 'takenIn'],
  ['output_json', 'outputJson'],
  ['error_json', 'errorJson'],
  ['wait_json', 'waitJson'],
  ['completed_seq', 'completedSeq'],
  ['started_at', 'startedAt'],
  ['ended_at', 'endedAt'],
] as const;

/** `cols` as a select list, aliases quoted when `quote` (PostgreSQL folds unquoted names). */
export function selectList(cols: readonly (readonly [string, string])[], quote: boolean): string {
  return cols.map(([c, a]) => (c === a ? c : `${c} AS ${quote ? `"${a}"` : a}`)).join(', ');
}

/** `doc` without its null fields (see FieldDoc). */
function compact(doc: Record<string, unknown>): FieldDoc {
  const out: FieldDoc = {};
  for (const [k, v] of Object.entries(doc)) if (v !== null && v !== undefined) out[k] = v;
  return out;
}

/** A counter as FieldDoc keeps it: absent (null) when 0. */
const count = (n: number): number | null => (n === 0 ? null : n);

/** A time relative to the instance's creation (see StateDoc), or null. */
const rel = (t: number | null, base: number): number | null => (t === null ? null : t - base);

/** JSON column text kept as text (parsed only if it changed: engine/store/history-state.ts JsonText). */
const json = (t: string | null): JsonText | null => (t === null ? null : new JsonText(t));

/** The state of one instance from its rows (engine/store/history-state.ts Snapshot; StateDoc once parsed). */
export function toSnapshot(i: RawStateInstance, nodes: readonly RawStateNode[]): Snapshot {
  const base = i.createdAt;
  const doc: Snapshot = {
    createdAt: base,
    instance: compact({
      s: encodeStatus(i.status),
      e: json(i.errorJson),
      u: json(i.suspensionJson),
      x: i.endStatus,
      p: rel(i.pausedAt, base),
      b: rel(i.startedAt, base),
      f: rel(i.endedAt, base),
      h: count(i.held),
    }),
    variables: new JsonText(i.variablesJson),
    nodes: nodeMap(),
    row: {
      workflowId: i.workflowId,
      version: i.version,
      deadlineAt: i.deadlineAt,
      parentId: i.parentId,
      concurrencyKey: i.concurrencyKey,
      test: i.test === 1,
      pinsJson: i.pinsJson,
    },
  };
  for (const n of nodes) {
    const node = compact({
      s: encodeStatus(n.status),
      a: count(n.attempt),
      l: n.attemptLimit,
      i: count(n.pendingIn),
      t: count(n.takenIn),
      e: json(n.errorJson),
      w: json(n.waitJson),
      q: n.completedSeq,
      b: rel(n.startedAt, base),
      f: rel(n.endedAt, base),
    });
    // Boxed: a null result is a result; only a missing one is absent.
    if (n.outputJson !== null) node.o = new JsonText(`[${n.outputJson}]`);
    doc.nodes[n.nodeId] = node;
  }
  return doc;
}

/** Prepares {@link StateQueries} on `db`. */
export function createStateQueries(db: Database.Database): StateQueries {
  const instance = db.prepare<[number], RawStateInstance>(
    `SELECT ${selectList(STATE_INSTANCE_COLS, false)} FROM instance WHERE id = ?`,
  );
  const nodes = db.prepare<[number], RawStateNode>(
    `SELECT ${selectList(STATE_NODE_COLS, false)} FROM node_state WHERE instance_id = ?`,
  );
  const take = db
    .prepare<[number], string>(
      `DELETE FROM history_state WHERE history_id = -? RETURNING patch_json`,
    )
    .pluck();
  // Keyed by the entry (a pending patch: by minus the instance's id; migration 16).
  const put = db.prepare<[number, string]>(`INSERT INTO history_state (history_id, patch_json) VALUES (?, ?)`);
  return {
    snapshot: (id) => {
      const i = instance.get(id);
      return i === undefined ? undefined : toSnapshot(i, nodes.all(id));
    },
    takePending: (id) => {
      const p = take.get(id);
      return p === undefined ? undefined : (JSON.parse(p) as StatePatch);
    },
    record: ({ instanceId, historyId, patch }) => void put.run(historyId === 0 ? -instanceId : historyId, JSON.stringify(patch)),
  };
}

/** A history row as time travel reads it. */
export interface RawHistoryRow {
  id: number;
  node_id: string | null;
  type: string;
  at: number;
  attempt: number | null;
  actor: string | null;
  data_json: string | null;
}

/** A history row as the API shows it. */
export function toHistoryEvent(h: RawHistoryRow): HistoryEvent {
  return {
    id: h.id,
    nodeId: h.node_id,
    type: h.type,
    at: h.at,
    attempt: h.attempt,
    actor: h.actor,
    ...(h.data_json === null ? {} : { data: JSON.parse(h.data_json) as unknown }),
  };
}

/** Prepares time travel's reads on `db`. */
export function createStateReads(db: Database.Database): Pick<ReadModel, TimeTravelReads> {
  const COLS = `id, node_id, type, at, attempt, actor, data_json`;
  const byId = db.prepare<[number, number], RawHistoryRow>(
    `SELECT ${COLS} FROM history WHERE instance_id = ? AND id = ?`,
  );
  const byTime = db.prepare<[number, number], RawHistoryRow>(
    `SELECT ${COLS} FROM history WHERE instance_id = ? AND at <= ? ORDER BY id DESC LIMIT 1`,
  );
  const bounds = db.prepare<
    [number],
    { first: number | null; last: number | null; firstAt: number | null; lastAt: number | null; n: number }
  >(
    `SELECT min(id) AS first, max(id) AS last, min(at) AS firstAt, max(at) AS lastAt, count(*) AS n FROM history WHERE instance_id = ?`,
  );
  const position = db
    .prepare<[number, number], number>(`SELECT count(*) FROM history WHERE instance_id = ? AND id <= ?`)
    .pluck();
  const patches = db
    .prepare<[number, number], string>(
      `SELECT s.patch_json FROM history h JOIN history_state s ON s.history_id = h.id WHERE h.instance_id = ? AND h.id <= ? ORDER BY h.id`,
    )
    .pluck();
  const read = (instanceId: number, at: { historyId: number } | { atMs: number }): StateTimeline => {
    const b = bounds.get(instanceId) ?? { first: null, last: null, firstAt: null, lastAt: null, n: 0 };
    const row = 'historyId' in at ? byId.get(instanceId, at.historyId) : byTime.get(instanceId, at.atMs);
    const range = { firstId: b.first, lastId: b.last, firstAt: b.firstAt, lastAt: b.lastAt, entries: b.n };
    if (!row) return { range };
    return {
      range,
      entry: toHistoryEvent(row),
      position: position.get(instanceId, row.id) ?? 0,
      patches: patches.all(instanceId, row.id).map((p) => JSON.parse(p) as StatePatch),
    };
  };
  return { stateTimeline: async (instanceId, at) => read(instanceId, at) };
}
