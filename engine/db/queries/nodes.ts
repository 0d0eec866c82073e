/**
 * SQLite: per-node state queries ({@link NodeQueries}), prepared once per connection.
 *
 * `wait_json` holds a node's wait (`{ kind, … }`); `error_json` and `output_json` are parsed here.
 */
import type Database from 'better-sqlite3';
import type { SerializedError } from '../../errors';
import type { NodeStatus } from '../../vocabulary';
import { setStep, type NodeQueries, type NodeRow, type NodeWait, type StepResults } from '../../store/queries';
import { parseStored } from './stored-json';

/** A `node_state` row as both backends select it (columns aliased to these names). */
export interface RawNode {
  nodeId: string;
  status: NodeStatus;
  attempt: number;
  attemptLimit: number;
  pendingIn: number;
  takenIn: number;
  version: number;
  outputJson: string | null;
  errorJson: string | null;
  waitJson: string | null;
  completedSeq: number | null;
  startedAt: number | null;
}

const COLS = `node_id AS nodeId, status, attempt, attempt_limit AS attemptLimit, pending_in AS pendingIn, taken_in AS takenIn,
  version, output_json AS outputJson, error_json AS errorJson, wait_json AS waitJson, completed_seq AS completedSeq,
  started_at AS startedAt`;

/** A selected `node_state` row as the state machine reads it, its JSON parsed (engine/db/queries/stored-json.ts). */
export function toNodeRow(r: RawNode, instanceId: number): NodeRow {
  return {
    nodeId: r.nodeId,
    status: r.status,
    attempt: r.attempt,
    attemptLimit: r.attemptLimit,
    pendingIn: r.pendingIn,
    takenIn: r.takenIn,
    version: r.version,
    output: r.outputJson === null ? undefined : parseStored<unknown>(r.outputJson, instanceId, 'output_json', r.nodeId),
    error: r.errorJson === null ? null : parseStored<SerializedError>(r.errorJson, instanceId, 'error_json', r.nodeId),
    wait: r.waitJson === null ? null : parseStored<NodeWait>(r.waitJson, instanceId, 'wait_json', r.nodeId),
    completedSeq: r.completedSeq,
    startedAt: r.startedAt,
  };
}

/** Nodes per statement of `insertAll` (7 parameters each, far below SQLite's limit of 32,766). */
const INSERT_CHUNK = 32;

/** Prepares {@link NodeQueries} on `db`. */
export function createNodeQueries(db: Database.Database): NodeQueries {
  const insert = db.prepare<[number, string, string, number, number, number, number | null]>(
    `INSERT INTO node_state (instance_id, node_id, status, attempt, attempt_limit, pending_in, started_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
  );
  // insertAll: one statement per chunk of up to INSERT_CHUNK nodes, prepared once per row count.
  const inserts = new Map<number, Database.Statement<unknown[]>>();
  const insertOf = (rows: number): Database.Statement<unknown[]> => {
    let st = inserts.get(rows);
    if (st === undefined) {
      st = db.prepare<unknown[]>(
        `INSERT INTO node_state (instance_id, node_id, status, attempt, attempt_limit, pending_in, started_at) VALUES ${Array.from({ length: rows }, () => '(?, ?, ?, ?, ?, ?, ?)').join(', ')}`,
      );
      inserts.set(rows, st);
    }
    return st;
  };
  const get = db.prepare<[number, string], RawNode>(`SELECT ${COLS} FROM node_state WHERE instance_id = ? AND node_id = ?`);
  const all = db.prepare<[number], RawNode>(`SELECT ${COLS} FROM node_state WHERE instance_id = ?`);
  const open = db.prepare<[number], { nodeId: string; status: NodeStatus }>(
    `SELECT node_id AS nodeId, status FROM node_state WHERE instance_id = ? AND status IN ('PENDING', 'READY', 'RUNNING', 'WAITING', 'RETRYING')`,
  );
  const openCounts = db.prepare<[number], { open: number; active: number }>(
    `SELECT count(*) FILTER (WHERE status IN ('PENDING', 'READY', 'RUNNING', 'WAITING', 'RETRYING')) AS open,
            count(*) FILTER (WHERE status IN ('READY', 'RUNNING')) AS active
       FROM node_state WHERE instance_id = ?`,
  );
  const results = db.prepare<[number], { nodeId: string; status: string; outputJson: string | null; errorJson: string | null }>(
    `SELECT node_id AS nodeId, status, output_json AS outputJson, error_json AS errorJson FROM node_state
      WHERE instance_id = ? AND status IN ('COMPLETED', 'COMPENSATING', 'COMPENSATED', 'FAILED')`,
  );
  const compensable = db.prepare<[number], { nodeId: string; completedSeq: number }>(
    `SELECT node_id AS nodeId, completed_seq AS completedSeq FROM node_state WHERE instance_id = ? AND status = 'COMPLETED'
        AND completed_seq IS NOT NULL ORDER BY completed_seq DESC`,
  );
  const otherIncidents = db.prepare<[number, string], { nodeId: string; errorJson: string | null; attempt: number; endedAt: number | null }>(
    `SELECT node_id AS nodeId, error_json AS errorJson, attempt, ended_at AS endedAt FROM node_state
      WHERE instance_id = ? AND node_id <> ? AND status = 'FAILED' AND json_extract(wait_json, '$.kind') = 'incident'
      ORDER BY ended_at, node_id`,
  );
  const startAttempt = db.prepare<[number, number, string]>(
    `UPDATE node_state SET status = 'RUNNING', attempt = attempt + 1, started_at = ?, version = version + 1, wait_json = NULL
      WHERE instance_id = ? AND node_id = ?`,
  );
  const startReadyAttempt = db.prepare<[number, number, string], { attempt: number; attemptLimit: number }>(
    `UPDATE node_state SET status = 'RUNNING', attempt = attempt + 1, started_at = ?, version = version + 1, wait_json = NULL
      WHERE instance_id = ? AND node_id = ? AND status IN ('READY', 'RETRYING') AND attempt < attempt_limit
      RETURNING attempt, attempt_limit AS attemptLimit`,
  );
  // One statement resolves the edge and decides the node; SET expressions read the row as it was
  // before the update. Plain positional parameters, some repeated (see the module doc).
  const resolveEdge = db.prepare<
    [number, number, string, number, number, number, number, number, number, number, number, number, string],
    { pendingIn: number; status: NodeStatus; attempt: number; attemptLimit: number }
  >(
    `UPDATE node_state SET status = CASE WHEN status <> 'PENDING' OR pending_in <> 1 THEN status
                                          WHEN taken_in + ? >= ? THEN ? ELSE 'SKIPPED' END,
            attempt = attempt + (status = 'PENDING' AND pending_in = 1 AND taken_in + ? >= ?) * ?,
            started_at = CASE WHEN ? AND status = 'PENDING' AND pending_in = 1 AND taken_in + ? >= ? THEN ? ELSE started_at END,
            pending_in = pending_in - 1, taken_in = taken_in + ?, version = version + 1
      WHERE instance_id = ? AND node_id = ?
      RETURNING pending_in AS pendingIn, status, attempt, attempt_limit AS attemptLimit`,
  );
  const complete = db.prepare<[string, number, number, number, string]>(
    `UPDATE node_state SET status = 'COMPLETED', output_json = ?, error_json = NULL, wait_json = NULL, ended_at = ?,
            completed_seq = ?, version = version + 1 WHERE instance_id = ? AND node_id = ?`,
  );
  const fail = db.prepare<[string, number, number, string]>(
    `UPDATE node_state SET status = 'FAILED', error_json = ?, ended_at = ?, version = version + 1 WHERE instance_id = ? AND node_id = ?`,
  );
  const park = db.prepare<[string, string, string | null, number, string]>(
    `UPDATE node_state SET status = ?, wait_json = ?, error_json = coalesce(?, error_json), version = version + 1
      WHERE instance_id = ? AND node_id = ?`,
  );
  // A failure's mark (incident, handled) and a moved wait both set the wait alone.
  const setWaitJson = db.prepare<[string, number, string]>(`UPDATE node_state SET wait_json = ? WHERE instance_id = ? AND node_id = ?`);
  const ready = db.prepare<[number, number, string]>(
    `UPDATE node_state SET status = 'READY', attempt_limit = ?, error_json = NULL, wait_json = NULL, version = version + 1
      WHERE instance_id = ? AND node_id = ?`,
  );
  const setStatus = db.prepare<[string, number, string]>(`UPDATE node_state SET status = ?, version = version + 1 WHERE instance_id = ? AND node_id = ?`);
  const unstart = db.prepare<[string, number, string]>(
    `UPDATE node_state SET status = ?, attempt = attempt - 1, started_at = NULL, version = version + 1
      WHERE instance_id = ? AND node_id = ?`,
  );
  const compensated = db.prepare<[number, string]>(
    `UPDATE node_state SET status = 'COMPENSATED', wait_json = NULL, error_json = NULL, version = version + 1
      WHERE instance_id = ? AND node_id = ?`,
  );
  const resetFailedCompensations = db.prepare<[number]>(
    `UPDATE node_state SET status = 'COMPLETED', wait_json = NULL, error_json = NULL, version = version + 1
      WHERE instance_id = ? AND status = 'COMPENSATING'`,
  );

  return {
    insert: ({ instanceId, nodeId, status, attemptLimit, pendingIn, now }) => {
      const running = status === 'RUNNING';
      insert.run(instanceId, nodeId, status, running ? 1 : 0, attemptLimit, pendingIn, running ? now : null);
    },
    insertAll: ({ instanceId, now, nodes }) => {
      for (let from = 0; from < nodes.length; from += INSERT_CHUNK) {
        const chunk = nodes.slice(from, from + INSERT_CHUNK);
        const params: unknown[] = [];
        for (const { nodeId, status, attemptLimit, pendingIn } of chunk) {
          const running = status === 'RUNNING';
          params.push(instanceId, nodeId, status, running ? 1 : 0, attemptLimit, pendingIn, running ? now : null);
        }
        insertOf(chunk.length).run(...params);
      }
    },
    get: (instanceId, nodeId) => {
      const r = get.get(instanceId, nodeId);
      return r === undefined ? undefined : toNodeRow(r, instanceId);
    },
    all: (instanceId) => all.all(instanceId).map((r) => toNodeRow(r, instanceId)),
    open: (instanceId) => open.all(instanceId),
    openCounts: (instanceId) => openCounts.get(instanceId) ?? { open: 0, active: 0 },
    results: (instanceId) => {
      const steps: StepResults = {};
      for (const s of results.all(instanceId)) {
        if (s.status === 'FAILED') setStep(steps, s.nodeId, { error: s.errorJson === null ? null : parseStored<unknown>(s.errorJson, instanceId, 'error_json', s.nodeId) });
        else setStep(steps, s.nodeId, s.outputJson === null ? null : parseStored<unknown>(s.outputJson, instanceId, 'output_json', s.nodeId));
      }
      return steps;
    },
    compensable: (instanceId) => compensable.all(instanceId),
    otherIncidents: ({ instanceId, exceptNodeId }) =>
      otherIncidents.all(instanceId, exceptNodeId).map((r) => ({
        nodeId: r.nodeId,
        error: r.errorJson === null ? null : parseStored<SerializedError>(r.errorJson, instanceId, 'error_json', r.nodeId),
        attempt: r.attempt,
        endedAt: r.endedAt,
      })),
    startAttempt: ({ instanceId, nodeId, now }) => void startAttempt.run(now, instanceId, nodeId),
    startReadyAttempt: ({ instanceId, nodeId, now }) => startReadyAttempt.get(now, instanceId, nodeId),
    resolveEdge: ({ instanceId, nodeId, taken, need, start, now }) => {
      const t = taken ? 1 : 0;
      const s = start ? 1 : 0;
      return resolveEdge.get(t, need, start ? 'RUNNING' : 'READY', t, need, s, s, t, need, now, t, instanceId, nodeId);
    },
    complete: ({ instanceId, nodeId, output, now, seq }) => void complete.run(JSON.stringify(output ?? null), now, seq, instanceId, nodeId),
    fail: ({ instanceId, nodeId, error, now }) => void fail.run(JSON.stringify(error), now, instanceId, nodeId),
    park: ({ instanceId, nodeId, status, wait, error }) =>
      void park.run(status, JSON.stringify(wait), error === undefined ? null : JSON.stringify(error), instanceId, nodeId),
    markFailure: ({ instanceId, nodeId, wait }) => void setWaitJson.run(JSON.stringify(wait), instanceId, nodeId),
    setWait: ({ instanceId, nodeId, wait }) => void setWaitJson.run(JSON.stringify(wait), instanceId, nodeId),
    ready: ({ instanceId, nodeId, attemptLimit }) => void ready.run(attemptLimit, instanceId, nodeId),
    setStatus: ({ instanceId, nodeId, status }) => void setStatus.run(status, instanceId, nodeId),
    unstart: ({ instanceId, nodeId, status }) => void unstart.run(status, instanceId, nodeId),
    compensated: ({ instanceId, nodeId }) => void compensated.run(instanceId, nodeId),
    resetFailedCompensations: (instanceId) => void resetFailedCompensations.run(instanceId),
  };
}
