/**
 * PostgreSQL: instance and history queries ({@link InstanceQueries}, {@link HistoryQueries}), the
 * statements of engine/db/queries/instances.ts translated, with the same encoding of
 * `instance.input_json` (`''` while the variables are still the start variables).
 *
 * Every statement on an existing instance takes its lock first (./context.ts); an instance this
 * transaction inserted is its own (no other transaction can see it before the commit), so its
 * later statements take no lock.
 */
import type { InstanceStatus } from '../../../vocabulary';
import type { HistoryQueries, InstanceQueries, InstanceRow, Pins } from '../../../store/queries';
import { parseStored } from '../../queries/stored-json';
import { toInstanceHead, toInstanceRow, type RawHead, type RawInstance } from '../../queries/instances';
import type { PgTx } from './context';


const INSERT = `INSERT INTO instance (workflow_id, status, variables_json, input_json, created_at, started_at, updated_at, deadline_at, business_key, parent_id, parent_node_id,
  concurrency_key, held, priority, test, pins_json)
  VALUES ($1, $2, $3, '', $4, $5, $4, $6, $7, $8, $9, $10, $11, coalesce($12::integer, (SELECT p.priority FROM instance p WHERE p.id = $8), 0),
  coalesce($13::integer, (SELECT p.test FROM instance p WHERE p.id = $8), 0), $14) RETURNING id`;
const GET = `SELECT id, workflow_id AS "workflowId", status, variables_json AS "variablesJson", version, suspension_json AS "suspensionJson",
  end_status AS "endStatus", started_at AS "startedAt", deadline_at AS "deadlineAt", error_json AS "errorJson", parent_id AS "parentId",
  paused_at AS "pausedAt", concurrency_key AS "concurrencyKey", test, pins_json AS "pinsJson" FROM instance WHERE id = $1`;
const HEAD = `SELECT id, status, deadline_at AS "deadlineAt", parent_id AS "parentId", paused_at AS "pausedAt", concurrency_key AS "concurrencyKey", test
  FROM instance WHERE id = $1`;
const COUNT_ADMITTED = `SELECT count(*)::int AS n FROM instance
  WHERE concurrency_key = $1 AND held = 0 AND status NOT IN ('COMPLETED', 'FAILED', 'CANCELLED')`;
const OLDEST_HELD = `SELECT id, workflow_id AS "workflowId", paused_at AS "pausedAt", test FROM instance
  WHERE concurrency_key = $1 AND held = 1 AND status NOT IN ('COMPLETED', 'FAILED', 'CANCELLED') ORDER BY priority DESC, id LIMIT 1`;
const ADMIT = `UPDATE instance SET held = 0, updated_at = $1, version = version + 1 WHERE id = $2`;
const HOLD = `UPDATE instance SET held = 1, status = 'PENDING', updated_at = $1, version = version + 1 WHERE id = $2`;
const VARIABLES = `SELECT status, paused_at AS "pausedAt", test, variables_json AS v, pins_json AS "pinsJson" FROM instance WHERE id = $1`;
const PAUSE = `UPDATE instance SET paused_at = $1, updated_at = $1, version = version + 1 WHERE id = $2`;
const UNPAUSE = `UPDATE instance SET deadline_at = deadline_at + ($1 - paused_at), paused_at = NULL, updated_at = $1, version = version + 1
  WHERE id = $2 AND paused_at IS NOT NULL`;
const TOUCH = `UPDATE instance SET status = $1, started_at = coalesce(started_at, $2), updated_at = $2, version = version + 1 WHERE id = $3`;
const SET_VARIABLES = `UPDATE instance SET input_json = CASE WHEN input_json = '' THEN variables_json ELSE input_json END,
  variables_json = $1, updated_at = $2, version = version + 1 WHERE id = $3`;
const SET_STATUS = `UPDATE instance SET status = $1, updated_at = $2, version = version + 1 WHERE id = $3`;
const END = `UPDATE instance SET status = $1, error_json = coalesce($2, error_json), ended_at = $3, updated_at = $3,
  suspension_json = NULL, paused_at = NULL, version = version + 1 WHERE id = $4`;
const SUSPEND = `UPDATE instance SET status = 'SUSPENDED',
  suspension_json = CASE WHEN status = 'SUSPENDED' AND suspension_json IS NOT NULL THEN suspension_json ELSE $1 END,
  updated_at = $2, version = version + 1 WHERE id = $3`;
const START_COMPENSATING = `UPDATE instance SET status = 'COMPENSATING', end_status = $1, error_json = coalesce($2, error_json),
  suspension_json = NULL, updated_at = $3, version = version + 1 WHERE id = $4`;
const CLEAR_SUSPENSION = `UPDATE instance SET status = $1, suspension_json = NULL, updated_at = $2, version = version + 1 WHERE id = $3`;
const REOPEN = `UPDATE instance SET status = 'RUNNING', ended_at = NULL, error_json = NULL, end_status = NULL, deadline_at = $1,
  updated_at = $2, version = version + 1 WHERE id = $3`;

const APPEND = `INSERT INTO history (instance_id, node_id, type, at, attempt, actor, data_json) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id`;
const DEAD_LETTER = `INSERT INTO dead_letter (instance_id, node_id, kind, attempts, error_json, created_at) VALUES ($1, $2, $3, $4, $5, $6)`;

const json = (v: unknown): string | null => (v === undefined ? null : JSON.stringify(v));

/** {@link InstanceQueries} over the transaction `tx`. */
export function createInstanceQueries(tx: PgTx): InstanceQueries {
  /** The first row of `sql` on instance `id` (its lock taken first). */
  const one = <R>(sql: string, id: number): R | undefined => {
    tx.lockInstance(id);
    return tx.run<R>(sql, [id]).rows[0];
  };
  /** A change whose last parameter is the instance id, the lock taken first. */
  const change = (sql: string, id: number, params: unknown[]): void => {
    tx.lockInstance(id);
    tx.exec(sql, [...params, id]);
  };
  const variablesOf = (id: number): { status: InstanceStatus; pausedAt: number | null; test: number; v: string; pinsJson: string | null } | undefined => one(VARIABLES, id);
  return {
    insert: ({ workflowId, status, variablesJson, now, deadlineAt, businessKey, parentId, parentNodeId, concurrencyKey, held, priority, test, pinsJson }) => {
      const params = [
        workflowId, status, variablesJson, now, status === 'RUNNING' ? now : null, deadlineAt, businessKey, parentId ?? null, parentNodeId ?? null,
        concurrencyKey ?? null, held === true ? 1 : 0, priority ?? null, test === undefined ? null : test ? 1 : 0, pinsJson ?? null,
      ];
      const r = tx.run<{ id: number }>(INSERT, params).rows[0];
      const id = (r as { id: number }).id;
      tx.holdsInstance(id);
      return id;
    },
    get: (id): InstanceRow | undefined => {
      const r = one<RawInstance>(GET, id);
      if (r === undefined) return undefined;
      return toInstanceRow(r);
    },
    head: (id) => {
      const r = one<RawHead>(HEAD, id);
      return r === undefined ? undefined : toInstanceHead(r);
    },
    variables: (id) => {
      const r = variablesOf(id);
      if (r === undefined) return undefined;
      const pins = r.pinsJson === null ? null : parseStored<Pins>(r.pinsJson, id, 'pins_json');
      return { status: r.status, pausedAt: r.pausedAt, test: r.test === 1, variables: parseStored<Record<string, unknown>>(r.v, id, 'variables_json'), pins };
    },
    // The slot's lock shares the workflow locks' key space: the key starts with the workflow name.
    lockConcurrency: (key) => tx.lockWorkflow(key),
    countAdmitted: (key) => tx.run<{ n: number }>(COUNT_ADMITTED, [key]).rows[0]?.n ?? 0,
    oldestHeld: (key) => {
      const r = tx.run<{ id: number; workflowId: number; pausedAt: number | null; test: number }>(OLDEST_HELD, [key]).rows[0];
      return r === undefined ? undefined : { id: r.id, workflowId: r.workflowId, pausedAt: r.pausedAt, test: r.test === 1 };
    },
    admit: ({ id, now }) => change(ADMIT, id, [now]),
    hold: ({ id, now }) => change(HOLD, id, [now]),
    pause: ({ id, now }) => change(PAUSE, id, [now]),
    unpause: ({ id, now }) => change(UNPAUSE, id, [now]),
    touch: ({ id, status, now }) => change(TOUCH, id, [status, now]),
    setVariables: ({ id, variables, now }) => change(SET_VARIABLES, id, [JSON.stringify(variables), now]),
    mergeVariables: ({ id, patch, now }) => {
      const cur = variablesOf(id);
      if (!cur) return;
      change(SET_VARIABLES, id, [JSON.stringify({ ...parseStored<Record<string, unknown>>(cur.v, id, 'variables_json'), ...patch }), now]);
    },
    setStatus: ({ id, status, now }) => change(SET_STATUS, id, [status, now]),
    end: ({ id, status, error, now }) => change(END, id, [status, json(error), now]),
    suspend: ({ id, suspension, now }) => change(SUSPEND, id, [JSON.stringify(suspension), now]),
    startCompensating: ({ id, endStatus, error, now }) => change(START_COMPENSATING, id, [endStatus, json(error), now]),
    clearSuspension: ({ id, status, now }) => change(CLEAR_SUSPENSION, id, [status, now]),
    reopen: ({ id, deadlineAt, now }) => change(REOPEN, id, [deadlineAt, now]),
  };
}

/** {@link HistoryQueries} over the transaction `tx`. */
export function createHistoryQueries(tx: PgTx): HistoryQueries {
  return {
    append: ({ instanceId, nodeId, type, at, attempt, actor, data }) => {
      if (instanceId !== null) tx.lockInstance(instanceId);
      const params = [instanceId, nodeId, type, at, attempt ?? null, actor ?? null, data === undefined ? null : JSON.stringify(data)];
      return (tx.run<{ id: number }>(APPEND, params).rows[0] as { id: number }).id;
    },
    deadLetter: ({ instanceId, nodeId, kind, attempts, error, now }) => {
      tx.lockInstance(instanceId);
      tx.exec(DEAD_LETTER, [instanceId, nodeId, kind, attempts, JSON.stringify(error), now]);
    },
  };
}
