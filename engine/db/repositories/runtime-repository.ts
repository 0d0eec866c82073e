/**
 * The state machine's SQL: every statement the worker and the resume/cancel/approve paths run,
 * prepared once per connection (graphile-worker's "named SQL functions" habit).
 *
 * Callers run these only inside `RunnelDb.write` (BEGIN IMMEDIATE); nothing here opens a
 * transaction of its own.
 */
import type Database from 'better-sqlite3';
import type { InstanceStatus, NodeStatus, ScheduleKind } from '../../vocabulary';

/**
 * `instance.input_json` of an instance whose variables never changed: its input is its
 * `variables_json` (not valid JSON, so it cannot be a real input). The first change of the
 * variables copies them there; until then the start variables are stored once, not twice (most
 * of an instance row's bytes).
 */
export const INPUT_AS_VARIABLES = '';

/**
 * `node_state.wait_json` of a FAILED node whose failure an error edge handled: a retry of the
 * instance leaves it alone, and it waits for nothing (the API shows no wait).
 */
export const HANDLED_FAILURE = '{"kind":"handled"}';

/** A `schedule` row. */
export interface ScheduleRow {
  id: number;
  instance_id: number;
  node_id: string | null;
  kind: ScheduleKind;
  next_run_at: number;
  retry_count: number;
  lease_owner: string | null;
  version: number;
}

/** An `instance` row as the runtime needs it. */
export interface InstanceRow {
  id: number;
  workflow_id: number;
  status: InstanceStatus;
  variables_json: string;
  version: number;
  suspension_json: string | null;
  end_status: 'FAILED' | 'CANCELLED' | null;
  started_at: number | null;
  /** When the instance must have ended (epoch ms), or null. */
  deadline_at: number | null;
}

/** What a transition needs of its instance: the id, the status and the deadline (no variables). */
export type InstanceHead = Pick<InstanceRow, 'id' | 'status' | 'deadline_at'>;

/** A `node_state` row. */
export interface NodeStateRow {
  instance_id: number;
  node_id: string;
  status: NodeStatus;
  attempt: number;
  attempt_limit: number;
  pending_in: number;
  taken_in: number;
  version: number;
  output_json: string | null;
  error_json: string | null;
  wait_json: string | null;
  completed_seq: number | null;
  started_at: number | null;
}

/** A prepared statement as the repositories expose it (a named interface keeps declarations portable). */
export interface Stmt<P extends unknown[], R> {
  run(...params: P): { changes: number; lastInsertRowid: number | bigint };
  get(...params: P): R | undefined;
  all(...params: P): R[];
}

/** Prepared statements of the runtime. Build one per connection with {@link createRuntimeRepository}. */
export type RuntimeRepository = ReturnType<typeof createRuntimeRepository>;

/**
 * Prepares the runtime's statements on `db`.
 *
 * Returns named functions; each is one statement (or a fixed pair) and runs synchronously.
 */
export function createRuntimeRepository(db: Database.Database) {
  function prep<P extends unknown[] = [], R = unknown>(sql: string): Stmt<P, R> {
    return db.prepare<P, R>(sql);
  }
  const s = {
    dueRows: prep<[number, number], ScheduleRow>(
      `SELECT id, instance_id, node_id, kind, next_run_at, retry_count, lease_owner, version
         FROM schedule WHERE next_run_at <= ? ORDER BY next_run_at LIMIT ?`,
    ),
    /** How many rows are due (expired leases included), counted up to a limit. */
    dueCount: prep<[number, number], { n: number }>(
      `SELECT count(*) AS n FROM (SELECT 1 FROM schedule WHERE next_run_at <= ? LIMIT ?)`,
    ),
    /** Passed deadlines (partial index schedule_deadline), oldest first. */
    dueDeadlines: prep<[number, number], ScheduleRow>(
      `SELECT id, instance_id, node_id, kind, next_run_at, retry_count, lease_owner, version
         FROM schedule WHERE kind = 'deadline' AND next_run_at <= ? ORDER BY next_run_at LIMIT ?`,
    ),
    /** Takes a row for good: deletes it while nobody else changed it (changes = 0: another worker had it). */
    takeRow: prep<[number, number]>(`DELETE FROM schedule WHERE id = ? AND version = ?`),
    lease: prep<[string, number, number, number, number]>(
      `UPDATE schedule SET lease_owner = ?, next_run_at = ?, lease_expires_at = ?, version = version + 1
        WHERE id = ? AND version = ?`,
    ),
    heartbeat: prep<[number, number, number, string, number]>(
      `UPDATE schedule SET next_run_at = ?, lease_expires_at = ? WHERE id = ? AND lease_owner = ? AND version = ?`,
    ),
    deleteSchedule: prep<[number]>(`DELETE FROM schedule WHERE id = ?`),
    /** Puts a claimed row back, due at `next_run_at`, with the owner it had before the claim. */
    deferClaim: prep<[string | null, number, number]>(
      `UPDATE schedule SET lease_owner = ?, lease_expires_at = NULL, next_run_at = ?, version = version + 1 WHERE id = ?`,
    ),
    /** Whether this owner still holds that claim (a read: the row may be reused by the outcome). */
    holdsLease: prep<[number, string, number], { id: number }>(`SELECT id FROM schedule WHERE id = ? AND lease_owner = ? AND version = ?`),
    /**
     * Reuses a consumed claim's row for a node dispatched at once (same instance): updated in
     * place instead of a DELETE and an INSERT, so the row and its instance index entry stay put.
     */
    reuseLeased: prep<[string, number, number, number, number]>(
      `UPDATE schedule SET node_id = ?, kind = 'run', next_run_at = ?, lease_expires_at = ?, retry_count = 0,
              version = version + 1, created_at = ? WHERE id = ?`,
    ),
    deleteInstanceSchedule: prep<[number]>(`DELETE FROM schedule WHERE instance_id = ?`),
    deleteUnleasedInstanceSchedule: prep<[number]>(
      `DELETE FROM schedule WHERE instance_id = ? AND lease_owner IS NULL AND kind IN ('run', 'timer', 'timeout')`,
    ),
    deleteDeadline: prep<[number]>(`DELETE FROM schedule WHERE instance_id = ? AND kind = 'deadline'`),
    deleteNodeSchedule: prep<[number, string]>(
      `DELETE FROM schedule WHERE instance_id = ? AND node_id = ? AND kind IN ('run', 'timer', 'timeout')`,
    ),
    insertSchedule: prep<[number, string | null, ScheduleKind, number, number, number]>(
      `INSERT INTO schedule (instance_id, node_id, kind, next_run_at, retry_count, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
    ),
    instance: prep<[number], InstanceRow>(
      `SELECT id, workflow_id, status, variables_json, version, suspension_json, end_status, started_at, deadline_at
         FROM instance WHERE id = ?`,
    ),
    /** A new instance: PENDING, or RUNNING (started_at set) when eager dispatch started an entry node. */
    /** The instance's id and status (an outcome's commit reads no more: variables are merged by their own read). */
    instanceHead: prep<[number], InstanceHead>(`SELECT id, status, deadline_at FROM instance WHERE id = ?`),
    insertInstance: prep<[number, string, string, string, number, number | null, number, number | null, string | null]>(
      `INSERT INTO instance (workflow_id, status, variables_json, input_json, created_at, started_at, updated_at, deadline_at, business_key)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    touchInstance: prep<[string, number, number, number]>(
      `UPDATE instance SET status = ?, started_at = coalesce(started_at, ?), updated_at = ?, version = version + 1 WHERE id = ?`,
    ),
    /** Sets the variables; the first change keeps the start variables in input_json (see {@link INPUT_AS_VARIABLES}). */
    setVariables: prep<[string, number, number]>(
      `UPDATE instance SET input_json = CASE WHEN input_json = '' THEN variables_json ELSE input_json END,
              variables_json = ?, updated_at = ?, version = version + 1 WHERE id = ?`,
    ),
    setInstanceStatus: prep<[string, number, number]>(
      `UPDATE instance SET status = ?, updated_at = ?, version = version + 1 WHERE id = ?`,
    ),
    endInstance: prep<[string, string | null, number, number, number]>(
      `UPDATE instance SET status = ?, error_json = coalesce(?, error_json), ended_at = ?, updated_at = ?,
              suspension_json = NULL, version = version + 1 WHERE id = ?`,
    ),
    /** SUSPENDs an instance; one already SUSPENDED keeps the incident it shows (the others wait their turn). */
    suspendInstance: prep<[string, number, number]>(
      `UPDATE instance SET status = 'SUSPENDED',
              suspension_json = CASE WHEN status = 'SUSPENDED' AND suspension_json IS NOT NULL THEN suspension_json ELSE ? END,
              updated_at = ?, version = version + 1 WHERE id = ?`,
    ),
    /** Marks a failed node as an open incident (it waits for a person's resume). */
    markIncident: prep<[number, string]>(
      `UPDATE node_state SET wait_json = '{"kind":"incident"}' WHERE instance_id = ? AND node_id = ?`,
    ),
    /** Marks a failed node whose failure an error edge handled (a retry of the instance leaves it alone). */
    markHandled: prep<[string, number, string]>(`UPDATE node_state SET wait_json = ? WHERE instance_id = ? AND node_id = ?`),
    /** Open incidents of an instance other than `node_id`, oldest first. */
    otherIncidents: prep<[number, string], { node_id: string; error_json: string | null; attempt: number; ended_at: number | null }>(
      `SELECT node_id, error_json, attempt, ended_at FROM node_state
        WHERE instance_id = ? AND node_id <> ? AND status = 'FAILED' AND wait_json = '{"kind":"incident"}'
        ORDER BY ended_at, node_id`,
    ),
    startCompensating: prep<[string, string | null, number, number]>(
      `UPDATE instance SET status = 'COMPENSATING', end_status = ?, error_json = coalesce(?, error_json),
              suspension_json = NULL, updated_at = ?, version = version + 1 WHERE id = ?`,
    ),
    clearSuspension: prep<[string, number, number]>(
      `UPDATE instance SET status = ?, suspension_json = NULL, updated_at = ?, version = version + 1 WHERE id = ?`,
    ),
    insertNodeState: prep<[number, string, string, number, number]>(
      `INSERT INTO node_state (instance_id, node_id, status, attempt_limit, pending_in) VALUES (?, ?, ?, ?, ?)`,
    ),
    /** An entry node started by eager dispatch as its instance is created: RUNNING, attempt 1. */
    insertRunningNodeState: prep<[number, string, number, number]>(
      `INSERT INTO node_state (instance_id, node_id, status, attempt, attempt_limit, pending_in, started_at) VALUES (?, ?, 'RUNNING', 1, ?, 0, ?)`,
    ),
    nodeState: prep<[number, string], NodeStateRow>(
      `SELECT instance_id, node_id, status, attempt, attempt_limit, pending_in, taken_in, version, output_json,
              error_json, wait_json, completed_seq, started_at FROM node_state WHERE instance_id = ? AND node_id = ?`,
    ),
    startAttempt: prep<[number, number, string]>(
      `UPDATE node_state SET status = 'RUNNING', attempt = attempt + 1, started_at = ?, version = version + 1,
              wait_json = NULL WHERE instance_id = ? AND node_id = ?`,
    ),
    setNodeStatus: prep<[string, number, string]>(
      `UPDATE node_state SET status = ?, version = version + 1 WHERE instance_id = ? AND node_id = ?`,
    ),
    /**
     * Marks a node COMPLETED. Its completed_seq orders completions (compensation runs in reverse
     * of it): the id of its `node.completed` history row, which only grows (history is append-only).
     */
    completeNode: prep<[string, number, number, number, string]>(
      `UPDATE node_state SET status = 'COMPLETED', output_json = ?, error_json = NULL, wait_json = NULL, ended_at = ?,
              completed_seq = ?, version = version + 1 WHERE instance_id = ? AND node_id = ?`,
    ),
    failNode: prep<[string, string, number, number, string]>(
      `UPDATE node_state SET status = ?, error_json = ?, ended_at = ?, version = version + 1
        WHERE instance_id = ? AND node_id = ?`,
    ),
    waitNode: prep<[string, string, string | null, number, string]>(
      `UPDATE node_state SET status = ?, wait_json = ?, error_json = coalesce(?, error_json), version = version + 1
        WHERE instance_id = ? AND node_id = ?`,
    ),
    readyNode: prep<[number, number, string]>(
      `UPDATE node_state SET status = 'READY', attempt_limit = ?, error_json = NULL, version = version + 1
        WHERE instance_id = ? AND node_id = ?`,
    ),
    /**
     * Resolves one incoming edge of a node, and when it was the last one decides the node in the
     * same statement: `ready` (READY, or RUNNING with its attempt started at `now` when the worker
     * dispatches it at once) if at least `need` incoming edges were taken, else SKIPPED. A node that
     * is not PENDING keeps its status. Returns the row after the change: the decision happened iff
     * `pending_in` is 0 and the status is READY, RUNNING or SKIPPED.
     */
    resolveEdge: prep<
      [number, number, string, number, number, number, number, number, number, number, number, number, string],
      { pending_in: number; status: string; attempt: number; attempt_limit: number }
    >(
      // Plain positional parameters, some repeated (named or numbered ones bind through an object,
      // measurably slower on this path). SET expressions read the row as it was before the update.
      `UPDATE node_state SET status = CASE WHEN status <> 'PENDING' OR pending_in <> 1 THEN status
                                            WHEN taken_in + ? >= ? THEN ? ELSE 'SKIPPED' END,
              attempt = attempt + (status = 'PENDING' AND pending_in = 1 AND taken_in + ? >= ?) * ?,
              started_at = CASE WHEN ? AND status = 'PENDING' AND pending_in = 1 AND taken_in + ? >= ? THEN ? ELSE started_at END,
              pending_in = pending_in - 1, taken_in = taken_in + ?, version = version + 1
        WHERE instance_id = ? AND node_id = ?
        RETURNING pending_in, status, attempt, attempt_limit`,
    ),
    /**
     * Starts the next attempt of a READY or RETRYING node with attempts left (the claim's usual
     * case, one statement); nothing when the node is in any other state (the caller then reads it).
     */
    startReadyAttempt: prep<[number, number, string], { attempt: number; attempt_limit: number }>(
      `UPDATE node_state SET status = 'RUNNING', attempt = attempt + 1, started_at = ?, version = version + 1, wait_json = NULL
        WHERE instance_id = ? AND node_id = ? AND status IN ('READY', 'RETRYING') AND attempt < attempt_limit
        RETURNING attempt, attempt_limit`,
    ),
    /** Takes back an attempt dispatched at once whose instance began failing in the same turn: it never ran. */
    unstartNode: prep<[number, string]>(
      `UPDATE node_state SET status = 'CANCELLED', attempt = attempt - 1, started_at = NULL, version = version + 1
        WHERE instance_id = ? AND node_id = ?`,
    ),
    /** A schedule row created already claimed by `lease_owner` until `next_run_at` (eager dispatch). */
    insertLeased: prep<[number, string, number, string, number, number]>(
      `INSERT INTO schedule (instance_id, node_id, kind, next_run_at, lease_owner, lease_expires_at, created_at)
       VALUES (?, ?, 'run', ?, ?, ?, ?)`,
    ),
    /** What a node dispatched at once needs of its instance, read at the end of the turn. */
    instanceVariables: prep<[number], { status: InstanceStatus; variables_json: string }>(
      `SELECT status, variables_json FROM instance WHERE id = ?`,
    ),
    /** Open nodes (OPEN_NODE_STATUSES) and active ones (READY or RUNNING) of an instance, in one row. */
    openCounts: prep<[number], { open: number; active: number }>(
      `SELECT count(*) FILTER (WHERE status IN ('PENDING', 'READY', 'RUNNING', 'WAITING', 'RETRYING')) AS open,
              count(*) FILTER (WHERE status IN ('READY', 'RUNNING')) AS active
         FROM node_state WHERE instance_id = ?`,
    ),
    completedOutputs: prep<[number], { node_id: string; status: string; output_json: string | null; error_json: string | null }>(
      `SELECT node_id, status, output_json, error_json FROM node_state WHERE instance_id = ?
          AND status IN ('COMPLETED', 'COMPENSATING', 'COMPENSATED', 'FAILED')`,
    ),
    openNodes: prep<[number], { node_id: string; status: string }>(
      `SELECT node_id, status FROM node_state WHERE instance_id = ? AND status IN ('PENDING', 'READY', 'RUNNING', 'WAITING', 'RETRYING')`,
    ),
    resetFailedCompensations: prep<[number]>(
      `UPDATE node_state SET status = 'COMPLETED', version = version + 1 WHERE instance_id = ? AND status = 'COMPENSATING'`,
    ),
    compensable: prep<[number], { node_id: string; completed_seq: number }>(
      `SELECT node_id, completed_seq FROM node_state WHERE instance_id = ? AND status = 'COMPLETED'
        AND completed_seq IS NOT NULL ORDER BY completed_seq DESC`,
    ),
    history: prep<[number | null, string | null, string, number, number | null, string | null, string | null]>(
      `INSERT INTO history (instance_id, node_id, type, at, attempt, actor, data_json) VALUES (?, ?, ?, ?, ?, ?, ?)`,
    ),
    deadLetter: prep<[number, string | null, string, number, string, number]>(
      `INSERT INTO dead_letter (instance_id, node_id, kind, attempts, error_json, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
    ),
    nextDue: prep<[], { at: number | null }>(`SELECT min(next_run_at) AS at FROM schedule`),
    rebaseDue: prep<[number, number]>(`UPDATE schedule SET next_run_at = ? WHERE next_run_at <= ? AND lease_owner IS NULL`),
    shiftLeases: prep<[number, number, number]>(
      `UPDATE schedule SET next_run_at = next_run_at - ?, lease_expires_at = lease_expires_at - ?
        WHERE lease_owner IS NOT NULL AND next_run_at > ?`,
    ),
    releaseLeases: prep<[number, string]>(
      `UPDATE schedule SET next_run_at = ?, lease_expires_at = NULL WHERE lease_owner = ?`,
    ),
  };
  return s;
}
