/**
 * PostgreSQL: per-node state queries ({@link NodeQueries}), the statements of
 * engine/db/queries/nodes.ts translated. Every one names an instance, so each takes that
 * instance's lock first (./context.ts). JSON columns are TEXT, parsed here as on SQLite; SQLite's
 * boolean arithmetic is spelt as CASE, `json_extract` as `::jsonb ->>`, and orderings say where
 * NULLs go and compare text bytewise (`COLLATE "C"`, SQLite's BINARY).
 */
import type { SerializedError } from '../../../errors';
import type { NodeStatus } from '../../../vocabulary';
import { setStep, type NodeQueries, type StepResults } from '../../../store/queries';
import { toNodeRow, type RawNode } from '../../queries/nodes';
import { parseStored } from '../../queries/stored-json';
import type { PgTx } from './context';


const COLS = `node_id AS "nodeId", status, attempt, attempt_limit AS "attemptLimit", pending_in AS "pendingIn", taken_in AS "takenIn",
  version, output_json AS "outputJson", error_json AS "errorJson", wait_json AS "waitJson", completed_seq AS "completedSeq",
  started_at AS "startedAt"`;

const OPEN = `('PENDING', 'READY', 'RUNNING', 'WAITING', 'RETRYING')`;

const INSERT = `INSERT INTO node_state (instance_id, node_id, status, attempt, attempt_limit, pending_in, started_at) VALUES ($1, $2, $3, $4, $5, $6, $7)`;
const GET = `SELECT ${COLS} FROM node_state WHERE instance_id = $1 AND node_id = $2`;
const ALL = `SELECT ${COLS} FROM node_state WHERE instance_id = $1`;
const OPEN_NODES = `SELECT node_id AS "nodeId", status FROM node_state WHERE instance_id = $1 AND status IN ${OPEN}`;
const OPEN_COUNTS = `SELECT count(*) FILTER (WHERE status IN ${OPEN}) AS open, count(*) FILTER (WHERE status IN ('READY', 'RUNNING')) AS active
  FROM node_state WHERE instance_id = $1`;
const RESULTS = `SELECT node_id AS "nodeId", status, output_json AS "outputJson", error_json AS "errorJson" FROM node_state
  WHERE instance_id = $1 AND status IN ('COMPLETED', 'COMPENSATING', 'COMPENSATED', 'FAILED')`;
const COMPENSABLE = `SELECT node_id AS "nodeId", completed_seq AS "completedSeq" FROM node_state WHERE instance_id = $1 AND status = 'COMPLETED'
  AND completed_seq IS NOT NULL ORDER BY completed_seq DESC`;
const OTHER_INCIDENTS = `SELECT node_id AS "nodeId", error_json AS "errorJson", attempt, ended_at AS "endedAt" FROM node_state
  WHERE instance_id = $1 AND node_id <> $2 AND status = 'FAILED' AND (wait_json::jsonb ->> 'kind') = 'incident'
  ORDER BY ended_at NULLS FIRST, node_id COLLATE "C"`;
const START_ATTEMPT = `UPDATE node_state SET status = 'RUNNING', attempt = attempt + 1, started_at = $1, version = version + 1, wait_json = NULL
  WHERE instance_id = $2 AND node_id = $3`;
const START_READY_ATTEMPT = `UPDATE node_state SET status = 'RUNNING', attempt = attempt + 1, started_at = $1, version = version + 1, wait_json = NULL
  WHERE instance_id = $2 AND node_id = $3 AND status IN ('READY', 'RETRYING') AND attempt < attempt_limit
  RETURNING attempt, attempt_limit AS "attemptLimit"`;
// One statement resolves the edge and decides the node; SET expressions read the row as it was
// before the update (as on SQLite). $1 taken (0/1), $2 need, $3 the decided status, $4 start, $5 now.
const DECIDES = `status = 'PENDING' AND pending_in = 1 AND taken_in + $1 >= $2`;
const RESOLVE_EDGE = `UPDATE node_state SET
    status = CASE WHEN status <> 'PENDING' OR pending_in <> 1 THEN status WHEN taken_in + $1 >= $2 THEN $3::text ELSE 'SKIPPED' END,
    attempt = attempt + CASE WHEN $4::boolean AND ${DECIDES} THEN 1 ELSE 0 END,
    started_at = CASE WHEN $4::boolean AND ${DECIDES} THEN $5::bigint ELSE started_at END,
    pending_in = pending_in - 1, taken_in = taken_in + $1, version = version + 1
  WHERE instance_id = $6 AND node_id = $7
  RETURNING pending_in AS "pendingIn", status, attempt, attempt_limit AS "attemptLimit"`;
const COMPLETE = `UPDATE node_state SET status = 'COMPLETED', output_json = $1, error_json = NULL, wait_json = NULL, ended_at = $2,
  completed_seq = $3, version = version + 1 WHERE instance_id = $4 AND node_id = $5`;
const FAIL = `UPDATE node_state SET status = 'FAILED', error_json = $1, ended_at = $2, version = version + 1 WHERE instance_id = $3 AND node_id = $4`;
const PARK = `UPDATE node_state SET status = $1, wait_json = $2, error_json = coalesce($3, error_json), version = version + 1
  WHERE instance_id = $4 AND node_id = $5`;
// A failure's mark (incident, handled) and a moved wait both set the wait alone.
const SET_WAIT = `UPDATE node_state SET wait_json = $1 WHERE instance_id = $2 AND node_id = $3`;
const READY = `UPDATE node_state SET status = 'READY', attempt_limit = $1, error_json = NULL, wait_json = NULL, version = version + 1
  WHERE instance_id = $2 AND node_id = $3`;
const SET_STATUS = `UPDATE node_state SET status = $1, version = version + 1 WHERE instance_id = $2 AND node_id = $3`;
const UNSTART = `UPDATE node_state SET status = $1, attempt = attempt - 1, started_at = NULL, version = version + 1
  WHERE instance_id = $2 AND node_id = $3`;
const COMPENSATED = `UPDATE node_state SET status = 'COMPENSATED', wait_json = NULL, error_json = NULL, version = version + 1
  WHERE instance_id = $1 AND node_id = $2`;
const RESET_FAILED_COMPENSATIONS = `UPDATE node_state SET status = 'COMPLETED', wait_json = NULL, error_json = NULL, version = version + 1
  WHERE instance_id = $1 AND status = 'COMPENSATING'`;


/** {@link NodeQueries} over the transaction `tx`. */
export function createNodeQueries(tx: PgTx): NodeQueries {
  /** Rows of `sql` for instance `instanceId` (its lock taken first). */
  const rows = <R>(sql: string, instanceId: number, ...rest: unknown[]): R[] => {
    tx.lockInstance(instanceId);
    return tx.run<R>(sql, [instanceId, ...rest]).rows;
  };
  /** Runs a change whose parameters end with (instanceId, nodeId), the lock taken first. */
  const change = (sql: string, params: unknown[], instanceId: number, nodeId?: string): void => {
    tx.lockInstance(instanceId);
    tx.exec(sql, nodeId === undefined ? [...params, instanceId] : [...params, instanceId, nodeId]);
  };
  return {
    insert: ({ instanceId, nodeId, status, attemptLimit, pendingIn, now }) => {
      const running = status === 'RUNNING';
      tx.lockInstance(instanceId);
      tx.exec(INSERT, [instanceId, nodeId, status, running ? 1 : 0, attemptLimit, pendingIn, running ? now : null]);
    },
    insertAll: ({ instanceId, now, nodes }) => {
      // Each is queued with the others (no answer read): one hop for them all.
      tx.lockInstance(instanceId);
      for (const { nodeId, status, attemptLimit, pendingIn } of nodes) {
        const running = status === 'RUNNING';
        tx.exec(INSERT, [instanceId, nodeId, status, running ? 1 : 0, attemptLimit, pendingIn, running ? now : null]);
      }
    },
    get: (instanceId, nodeId) => {
      const r = rows<RawNode>(GET, instanceId, nodeId)[0];
      return r === undefined ? undefined : toNodeRow(r, instanceId);
    },
    all: (instanceId) => rows<RawNode>(ALL, instanceId).map((r) => toNodeRow(r, instanceId)),
    open: (instanceId) => rows<{ nodeId: string; status: NodeStatus }>(OPEN_NODES, instanceId),
    openCounts: (instanceId) => rows<{ open: number; active: number }>(OPEN_COUNTS, instanceId)[0] ?? { open: 0, active: 0 },
    results: (instanceId) => {
      const steps: StepResults = {};
      for (const s of rows<{ nodeId: string; status: string; outputJson: string | null; errorJson: string | null }>(RESULTS, instanceId)) {
        if (s.status === 'FAILED') setStep(steps, s.nodeId, { error: s.errorJson === null ? null : parseStored<unknown>(s.errorJson, instanceId, 'error_json', s.nodeId) });
        else setStep(steps, s.nodeId, s.outputJson === null ? null : parseStored<unknown>(s.outputJson, instanceId, 'output_json', s.nodeId));
      }
      return steps;
    },
    compensable: (instanceId) => rows<{ nodeId: string; completedSeq: number }>(COMPENSABLE, instanceId),
    otherIncidents: ({ instanceId, exceptNodeId }) =>
      rows<{ nodeId: string; errorJson: string | null; attempt: number; endedAt: number | null }>(OTHER_INCIDENTS, instanceId, exceptNodeId).map((r) => ({
        nodeId: r.nodeId,
        error: r.errorJson === null ? null : parseStored<SerializedError>(r.errorJson, instanceId, 'error_json', r.nodeId),
        attempt: r.attempt,
        endedAt: r.endedAt,
      })),
    startAttempt: ({ instanceId, nodeId, now }) => change(START_ATTEMPT, [now], instanceId, nodeId),
    startReadyAttempt: ({ instanceId, nodeId, now }) => {
      tx.lockInstance(instanceId);
      return tx.run<{ attempt: number; attemptLimit: number }>(START_READY_ATTEMPT, [now, instanceId, nodeId]).rows[0];
    },
    resolveEdge: ({ instanceId, nodeId, taken, need, start, now }) => {
      tx.lockInstance(instanceId);
      const params = [taken ? 1 : 0, need, start ? 'RUNNING' : 'READY', start, now, instanceId, nodeId];
      return tx.run<{ pendingIn: number; status: NodeStatus; attempt: number; attemptLimit: number }>(RESOLVE_EDGE, params).rows[0];
    },
    complete: ({ instanceId, nodeId, output, now, seq }) => change(COMPLETE, [JSON.stringify(output ?? null), now, seq], instanceId, nodeId),
    fail: ({ instanceId, nodeId, error, now }) => change(FAIL, [JSON.stringify(error), now], instanceId, nodeId),
    park: ({ instanceId, nodeId, status, wait, error }) =>
      change(PARK, [status, JSON.stringify(wait), error === undefined ? null : JSON.stringify(error)], instanceId, nodeId),
    markFailure: ({ instanceId, nodeId, wait }) => change(SET_WAIT, [JSON.stringify(wait)], instanceId, nodeId),
    setWait: ({ instanceId, nodeId, wait }) => change(SET_WAIT, [JSON.stringify(wait)], instanceId, nodeId),
    ready: ({ instanceId, nodeId, attemptLimit }) => change(READY, [attemptLimit], instanceId, nodeId),
    setStatus: ({ instanceId, nodeId, status }) => change(SET_STATUS, [status], instanceId, nodeId),
    unstart: ({ instanceId, nodeId, status }) => change(UNSTART, [status], instanceId, nodeId),
    compensated: ({ instanceId, nodeId }) => change(COMPENSATED, [], instanceId, nodeId),
    resetFailedCompensations: (instanceId) => change(RESET_FAILED_COMPENSATIONS, [], instanceId),
  };
}
